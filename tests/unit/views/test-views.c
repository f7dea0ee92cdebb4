/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for core/views/views.c: publishing, builders (and their refusals),
 * caps, listeners (including changes made from inside a notification),
 * watches, bulk removal, detached views, and the JSON shape, checked field
 * by field with json-glib.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/views/interest.h"
#include "core/views/views-private.h"
#include "core/views/views.h"
#include "core/wire/seeded_hash.h"

/* ------------------------------------------------------------ helpers */

typedef struct Event {
    ddm_view *view;
    DdmViewChange change;
    char *name;
    guint64 version;
} Event;

typedef struct Recorder {
    GArray *events; /* Event */
    DdmViews *store;
    /* optional actions from inside the callback */
    guint remove_listener_id;   /* remove this listener on the first event */
    gboolean destroy_on_change; /* destroy the view on CHANGED */
    gboolean add_listener;      /* add another listener on the first event */
    struct Recorder *other;
} Recorder;

static void recorder_init(Recorder *r, DdmViews *store)
{
    memset(r, 0, sizeof *r);
    r->events = g_array_new(FALSE, TRUE, sizeof(Event));
    r->store = store;
}

static void recorder_clear(Recorder *r)
{
    for (guint i = 0; i < r->events->len; i++)
        g_free(g_array_index(r->events, Event, i).name);
    g_array_free(r->events, TRUE);
}

static void on_change(ddm_view *view, DdmViewChange change, gpointer ud)
{
    Recorder *r = ud;
    Event e = {view, change, g_strdup(ddm_view_name(view)), ddm_view_version(view)};

    assert_true(ddm_view_is_valid(view));
    g_array_append_val(r->events, e);
    if (r->remove_listener_id) {
        ddm_views_remove_listener(r->store, r->remove_listener_id);
        r->remove_listener_id = 0;
    }
    if (r->add_listener) {
        r->add_listener = FALSE;
        ddm_views_add_listener(r->store, on_change, r->other);
    }
    if (r->destroy_on_change && change == DDM_VIEW_CHANGED)
        ddm_views_destroy(r->store, view);
}

static const Event *ev(const Recorder *r, guint i)
{
    assert_true(i < r->events->len);
    return &g_array_index(r->events, Event, i);
}

static const ddm_column demo_cols[] = {
    {"pid", DDM_VAL_INT, NULL},
    {"name", DDM_VAL_STR, NULL},
    {"cpu", DDM_VAL_DOUBLE, "%"},
    {"ddm", DDM_VAL_BOOL, NULL},
};

static void add_demo_row(ddm_view *v, int64_t pid, const char *name, double cpu, int ddm)
{
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_int(v, pid), 0);
    assert_int_equal(ddm_view_cell_str(v, name), 0);
    assert_int_equal(ddm_view_cell_double(v, cpu), 0);
    assert_int_equal(ddm_view_cell_bool(v, ddm), 0);
}

static guint rows_of(const ddm_view *v)
{
    JsonNode *n = ddm_view_to_json(v, FALSE);
    guint len = json_array_get_length(json_object_get_array_member(json_node_get_object(n), "rows"));
    json_node_unref(n);
    return len;
}

/* Capture warnings instead of letting them abort or clutter the output. */
static int warnings_seen;

static GLogWriterOutput count_warnings(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                                       gpointer ud)
{
    if (level & G_LOG_LEVEL_WARNING)
        warnings_seen++;
    return G_LOG_WRITER_HANDLED;
}

/* -------------------------------------------------------------- tests */

static void test_views_create_lookup(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *a, *b, *c, *dup;
    GPtrArray *list;

    a = ddm_views_create(s, "threads", "127.0.0.1:8000", "threads", DDM_VIEW_TABLE, "Threads");
    b = ddm_views_create(s, "threads", "127.0.0.1:8001", "threads", DDM_VIEW_TABLE, NULL);
    c = ddm_views_create(s, "core", NULL, "vms", DDM_VIEW_TABLE, "VMs");
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_ptr_not_equal(a, b);
    dup = ddm_views_create(s, "other", "127.0.0.1:8000", "threads", DDM_VIEW_RECORD, "x");
    assert_null(dup);
    assert_null(ddm_views_create(s, "core", NULL, "vms", DDM_VIEW_TABLE, NULL));
    /* bad names and kinds */
    assert_null(ddm_views_create(s, "x", NULL, "", DDM_VIEW_TABLE, NULL));
    assert_null(ddm_views_create(s, "x", NULL, NULL, DDM_VIEW_TABLE, NULL));
    assert_null(ddm_views_create(s, "x", NULL, "a\nb", DDM_VIEW_TABLE, NULL));
    assert_null(ddm_views_create(s, "x", NULL, "ok", (ddm_view_kind)9, NULL));
    assert_null(ddm_views_create(s, "x", "", "ok", DDM_VIEW_TABLE, NULL));

    assert_ptr_equal(ddm_views_lookup(s, "threads", "127.0.0.1:8000"), a);
    assert_ptr_equal(ddm_views_lookup(s, "threads", "127.0.0.1:8001"), b);
    assert_ptr_equal(ddm_views_lookup(s, "vms", NULL), c);
    assert_null(ddm_views_lookup(s, "vms", "127.0.0.1:8000"));
    assert_null(ddm_views_lookup(s, "threads", NULL));
    assert_null(ddm_views_lookup(s, "nope", NULL));
    assert_null(ddm_views_lookup(s, NULL, NULL));

    assert_string_equal(ddm_view_name(a), "threads");
    assert_string_equal(ddm_view_vm_key(a), "127.0.0.1:8000");
    assert_null(ddm_view_vm_key(c));
    assert_string_equal(ddm_view_owner(a), "threads");
    assert_string_equal(ddm_view_title(a), "Threads");
    assert_string_equal(ddm_view_title(b), "threads"); /* defaults to the name */
    assert_int_equal(ddm_view_kind_of(a), DDM_VIEW_TABLE);
    assert_int_equal(ddm_view_version(a), 0);
    assert_true(ddm_view_is_valid(a));
    assert_false(ddm_view_is_valid(NULL));

    list = ddm_views_list(s);
    assert_int_equal(list->len, 3);
    assert_ptr_equal(g_ptr_array_index(list, 0), c); /* global first */
    assert_ptr_equal(g_ptr_array_index(list, 1), a);
    assert_ptr_equal(g_ptr_array_index(list, 2), b);
    g_ptr_array_free(list, TRUE);

    ddm_views_destroy(s, a);
    assert_null(ddm_views_lookup(s, "threads", "127.0.0.1:8000"));
    /* the name is free again */
    a = ddm_views_create(s, "threads", "127.0.0.1:8000", "threads", DDM_VIEW_TABLE, "Threads");
    assert_non_null(a);
    ddm_views_free(s);
}

static void test_views_begin_commit_visibility(void **state)
{
    DdmViews *s = ddm_views_new();
    Recorder r;
    ddm_view *v = ddm_views_create(s, "p", NULL, "t", DDM_VIEW_TABLE, NULL);

    recorder_init(&r, s);
    ddm_views_add_listener(s, on_change, &r);
    /* builders need begin */
    assert_int_equal(ddm_view_row(v), -EPROTO);
    assert_int_equal(ddm_view_cell_int(v, 1), -EPROTO);
    assert_int_equal(ddm_view_commit(v), -EPROTO);

    assert_int_equal(ddm_view_set_columns(v, demo_cols, G_N_ELEMENTS(demo_cols)), 0);
    assert_int_equal(r.events->len, 1); /* new columns published at once */
    assert_int_equal(ev(&r, 0)->change, DDM_VIEW_CHANGED);
    assert_int_equal(ddm_view_version(v), 1);
    /* same columns again: nothing changes */
    assert_int_equal(ddm_view_set_columns(v, demo_cols, G_N_ELEMENTS(demo_cols)), 0);
    assert_int_equal(r.events->len, 1);

    assert_int_equal(ddm_view_begin(v), 0);
    add_demo_row(v, 1, "a", 1.5, 1);
    add_demo_row(v, 2, "b", 2.5, 0);
    assert_int_equal(rows_of(v), 0); /* not yet visible */
    assert_int_equal(r.events->len, 1);
    assert_int_equal(ddm_view_commit(v), 0);
    assert_int_equal(rows_of(v), 2);
    assert_int_equal(ddm_view_version(v), 2);
    assert_int_equal(r.events->len, 2);
    assert_int_equal(ev(&r, 1)->change, DDM_VIEW_CHANGED);
    assert_int_equal(ev(&r, 1)->version, 2); /* listeners see the new content */

    /* a second build replaces, and the old stays until commit */
    assert_int_equal(ddm_view_begin(v), 0);
    add_demo_row(v, 3, "c", 0, 0);
    assert_int_equal(rows_of(v), 2);
    /* begin again throws the partial build away */
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    assert_int_equal(rows_of(v), 0);
    assert_int_equal(ddm_view_version(v), 3);

    /* set_columns while building clears the rows being built only */
    assert_int_equal(ddm_view_begin(v), 0);
    add_demo_row(v, 4, "d", 0, 0);
    assert_int_equal(ddm_view_set_columns(v, demo_cols, 2), 0);
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_int(v, 5), 0);
    assert_int_equal(ddm_view_cell_str(v, NULL), 0); /* null cell */
    assert_int_equal(ddm_view_commit(v), 0);
    {
        JsonNode *n = ddm_view_to_json(v, FALSE);
        JsonObject *o = json_node_get_object(n);
        JsonArray *rows = json_object_get_array_member(o, "rows");
        assert_int_equal(json_array_get_length(json_object_get_array_member(o, "columns")), 2);
        assert_int_equal(json_array_get_length(rows), 1);
        assert_int_equal(json_array_get_int_element(json_array_get_array_element(rows, 0), 0), 5);
        assert_true(json_array_get_null_element(json_array_get_array_element(rows, 0), 1));
        json_node_unref(n);
    }
    /* wrong kind for builders */
    assert_int_equal(ddm_view_field_int(v, "k", 1), -EINVAL);
    assert_int_equal(ddm_view_blob(v, "x/y", "a", 1), -EINVAL);
    recorder_clear(&r);
    ddm_views_free(s);
}

static void test_views_cell_errors(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *v = ddm_views_create(s, "plug", "vm1", "t", DDM_VIEW_TABLE, NULL);

    warnings_seen = 0;
    assert_int_equal(ddm_view_set_columns(v, demo_cols, G_N_ELEMENTS(demo_cols)), 0);

    /* INT into a DOUBLE column is accepted and converted */
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_int(v, 7), 0);
    assert_int_equal(ddm_view_cell_str(v, "x"), 0);
    assert_int_equal(ddm_view_cell_int(v, 3), 0);
    assert_int_equal(ddm_view_cell_bool(v, 1), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    {
        JsonNode *n = ddm_view_to_json(v, FALSE);
        JsonArray *row = json_array_get_array_element(
            json_object_get_array_member(json_node_get_object(n), "rows"), 0);
        JsonNode *cell = json_array_get_element(row, 2);
        assert_int_equal(json_node_get_value_type(cell), G_TYPE_DOUBLE);
        assert_true(json_node_get_double(cell) == 3.0);
        json_node_unref(n);
    }
    guint64 good_version = ddm_view_version(v);

    /* wrong type */
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_str(v, "not an int"), -EINVAL);
    assert_int_equal(ddm_view_cell_str(v, "x"), 0);
    assert_int_equal(ddm_view_cell_double(v, 1), 0);
    assert_int_equal(ddm_view_cell_bool(v, 0), 0);
    assert_int_equal(ddm_view_commit(v), -EINVAL);
    assert_int_equal(ddm_view_version(v), good_version);
    assert_int_equal(rows_of(v), 1);

    /* double into an INT column, bool into a STR column */
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_double(v, 1.0), -EINVAL);
    assert_int_equal(ddm_view_cell_bool(v, 1), -EINVAL);
    assert_int_equal(ddm_view_commit(v), -EINVAL);

    /* too many cells */
    assert_int_equal(ddm_view_begin(v), 0);
    add_demo_row(v, 1, "a", 1, 1);
    assert_int_equal(ddm_view_cell_int(v, 9), -EINVAL);
    assert_int_equal(ddm_view_commit(v), -EINVAL);
    assert_int_equal(ddm_view_version(v), good_version);

    /* short row in the middle */
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_int(v, 1), 0);
    assert_int_equal(ddm_view_row(v), -EINVAL);
    assert_int_equal(ddm_view_commit(v), -EINVAL);

    /* short last row */
    assert_int_equal(ddm_view_begin(v), 0);
    add_demo_row(v, 1, "a", 1, 1);
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_int(v, 2), 0);
    assert_int_equal(ddm_view_commit(v), -EINVAL);
    assert_int_equal(ddm_view_version(v), good_version);
    assert_int_equal(rows_of(v), 1);

    /* a cell before any row */
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_cell_int(v, 2), -EPROTO);
    assert_int_equal(ddm_view_commit(v), -EINVAL);

    /* the view still works after all that */
    assert_int_equal(ddm_view_begin(v), 0);
    add_demo_row(v, 1, "a", 1, 1);
    add_demo_row(v, 2, "b", 1, 1);
    assert_int_equal(ddm_view_commit(v), 0);
    assert_int_equal(rows_of(v), 2);

    /* bad column definitions */
    {
        const ddm_column bad_type[] = {{"x", (ddm_value_type)0, NULL}};
        const ddm_column no_name[] = {{NULL, DDM_VAL_INT, NULL}};
        assert_int_equal(ddm_view_set_columns(v, bad_type, 1), -EINVAL);
        assert_int_equal(ddm_view_set_columns(v, no_name, 1), -EINVAL);
        assert_int_equal(ddm_view_set_columns(v, NULL, 2), -EINVAL);
        assert_int_equal(rows_of(v), 2); /* untouched */
    }
    /* no columns: rows are refused */
    {
        ddm_view *e = ddm_views_create(s, "plug", "vm1", "empty", DDM_VIEW_TABLE, NULL);
        assert_int_equal(ddm_view_begin(e), 0);
        assert_int_equal(ddm_view_row(e), -EINVAL);
        assert_int_equal(ddm_view_commit(e), -EINVAL);
    }
    assert_int_equal(ddm_view_row(NULL), -EINVAL);
    ddm_views_free(s);
}

static void test_views_record(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *v = ddm_views_create(s, "vminfo", "vm", "info", DDM_VIEW_RECORD, "VM info");
    JsonNode *n;
    JsonArray *fields;

    assert_int_equal(ddm_view_field_str(v, "a", "x"), -EPROTO);
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_field_str(v, "app", "com.example"), 0);
    assert_int_equal(ddm_view_field_int(v, "pid", 42), 0);
    assert_int_equal(ddm_view_field_double(v, "load", 0.5), 0);
    assert_int_equal(ddm_view_field_bool(v, "debuggable", 1), 0);
    assert_int_equal(ddm_view_field_str(v, "abi", NULL), 0);
    /* replace keeps the position and may change the type */
    assert_int_equal(ddm_view_field_int(v, "app", 7), 0);
    assert_int_equal(ddm_view_field_int(v, "pid", 43), 0);
    assert_int_equal(ddm_view_field_int(v, NULL, 1), -EINVAL);
    assert_int_equal(ddm_view_cell_int(v, 1), -EINVAL);
    assert_int_equal(ddm_view_row(v), -EINVAL);
    assert_int_equal(ddm_view_commit(v), 0);

    n = ddm_view_to_json(v, FALSE);
    fields = json_object_get_array_member(json_node_get_object(n), "fields");
    assert_int_equal(json_array_get_length(fields), 5);
    {
        static const char *keys[] = {"app", "pid", "load", "debuggable", "abi"};
        static const char *types[] = {"int", "int", "double", "bool", "str"};
        for (guint i = 0; i < 5; i++) {
            JsonObject *f = json_array_get_object_element(fields, i);
            assert_string_equal(json_object_get_string_member(f, "key"), keys[i]);
            assert_string_equal(json_object_get_string_member(f, "type"), types[i]);
            assert_true(json_object_has_member(f, "value"));
        }
        assert_int_equal(json_object_get_int_member(json_array_get_object_element(fields, 0), "value"), 7);
        assert_int_equal(json_object_get_int_member(json_array_get_object_element(fields, 1), "value"), 43);
        assert_true(json_object_get_double_member(json_array_get_object_element(fields, 2), "value") == 0.5);
        assert_true(json_object_get_boolean_member(json_array_get_object_element(fields, 3), "value"));
        assert_true(json_object_get_null_member(json_array_get_object_element(fields, 4), "value"));
    }
    json_node_unref(n);

    /* a new build starts from nothing */
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_field_int(v, "only", 1), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    n = ddm_view_to_json(v, FALSE);
    assert_int_equal(json_array_get_length(json_object_get_array_member(json_node_get_object(n), "fields")), 1);
    json_node_unref(n);
    ddm_views_free(s);
}

/* A record past the few fields it scans linearly (view_content.c) finds
 * its fields through a hash: every key set twice keeps one field, in the
 * order of first setting, with the last value; an empty view's content and
 * a table of long strings come out whole (the string blocks grow). */
static void test_views_record_many_fields(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *v = ddm_views_create(s, "p", "vm", "many", DDM_VIEW_RECORD, NULL);
    ddm_view *t = ddm_views_create(s, "p", "vm", "long", DDM_VIEW_TABLE, NULL);
    static const ddm_column cols[] = {{"text", DDM_VAL_STR, NULL}, {"n", DDM_VAL_INT, "B"}};
    JsonNode *n;
    JsonArray *a;
    (void)state;

    n = ddm_view_to_json(v, FALSE);
    assert_int_equal(json_array_get_length(json_object_get_array_member(json_node_get_object(n), "fields")), 0);
    json_node_unref(n);
    assert_int_equal(ddm_view_begin(v), 0);
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 100; i++) {
            char key[16];
            g_snprintf(key, sizeof key, "k%d", i);
            assert_int_equal(ddm_view_field_int(v, key, round * 1000 + i), 0);
        }
    assert_int_equal(ddm_view_commit(v), 0);
    n = ddm_view_to_json(v, FALSE);
    a = json_object_get_array_member(json_node_get_object(n), "fields");
    assert_int_equal(json_array_get_length(a), 100);
    for (guint i = 0; i < 100; i++) {
        JsonObject *f = json_array_get_object_element(a, i);
        char key[16];
        g_snprintf(key, sizeof key, "k%u", i);
        assert_string_equal(json_object_get_string_member(f, "key"), key);
        assert_int_equal(json_object_get_int_member(f, "value"), 1000 + i);
    }
    json_node_unref(n);

    assert_int_equal(ddm_view_set_columns(t, cols, 2), 0);
    assert_int_equal(ddm_view_begin(t), 0);
    for (int i = 0; i < 50; i++) {
        char *text = g_strnfill(1000 + i, (char)('a' + i % 26));
        assert_int_equal(ddm_view_row(t), 0);
        assert_int_equal(ddm_view_cell_str(t, text), 0);
        assert_int_equal(ddm_view_cell_int(t, i), 0);
        g_free(text);
    }
    assert_int_equal(ddm_view_commit(t), 0);
    n = ddm_view_to_json(t, FALSE);
    a = json_object_get_array_member(json_node_get_object(n), "rows");
    assert_int_equal(json_array_get_length(a), 50);
    for (guint i = 0; i < 50; i++) {
        JsonArray *row = json_array_get_array_element(a, i);
        const char *text = json_array_get_string_element(row, 0);
        assert_int_equal(strlen(text), 1000 + i);
        assert_true(text[0] == (char)('a' + i % 26) && text[999 + i] == (char)('a' + i % 26));
        assert_int_equal(json_array_get_int_element(row, 1), i);
    }
    json_node_unref(n);
    /* the columns survive a new build sharing them with the schema */
    assert_int_equal(ddm_view_begin(t), 0);
    assert_int_equal(ddm_view_commit(t), 0);
    n = ddm_view_to_json(t, FALSE);
    a = json_object_get_array_member(json_node_get_object(n), "columns");
    assert_int_equal(json_array_get_length(a), 2);
    json_node_unref(n);
    ddm_views_free(s);
}

/* Keys that all collide under g_str_hash (DJB2): blocks of "aB" or "b!"
 * (equal sums: 'a' * 33 + 'B' == 'b' * 33 + '!'), 2^BLOCKS of them. */
enum { COLLIDING_BLOCKS = 8, N_COLLIDING = 1 << COLLIDING_BLOCKS };

static void colliding_key(char *out, int i)
{
    for (int k = 0; k < COLLIDING_BLOCKS; k++)
        memcpy(&out[2 * k], i >> k & 1 ? "b!" : "aB", 2);
    out[2 * COLLIDING_BLOCKS] = '\0';
}

/* VM keys (partly from the wire), record field names and column names
 * a VM could choose to collide under DJB2 are hashed with the process's
 * seeded hash (core/wire/seeded_hash.h): they spread over a table's
 * slots, and every lookup still finds its own view, field and column set. */
static void test_views_colliding_keys(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *views[N_COLLIDING];
    ddm_view *rec = ddm_views_create(s, "p", "vm", "fields", DDM_VIEW_RECORD, NULL);
    g_autoptr(GHashTable) slots = g_hash_table_new(g_direct_hash, g_direct_equal);
    char key[2 * COLLIDING_BLOCKS + 1], first[2 * COLLIDING_BLOCKS + 1];
    GPtrArray *named;
    JsonNode *n;
    JsonArray *a;
    (void)state;

    colliding_key(first, 0);
    for (int i = 0; i < N_COLLIDING; i++) {
        colliding_key(key, i);
        assert_int_equal(g_str_hash(key), g_str_hash(first)); /* the attack holds */
        g_hash_table_add(slots, GUINT_TO_POINTER(ddm_str_hash(key) & (N_COLLIDING - 1)));
        views[i] = ddm_views_create(s, "p", key, "t", DDM_VIEW_TABLE, NULL);
        assert_non_null(views[i]);
    }
    /* 256 random hashes fill ~162 of 256 slots; DJB2 fills one */
    assert_true(g_hash_table_size(slots) >= N_COLLIDING / 2);
    for (int i = 0; i < N_COLLIDING; i++) {
        colliding_key(key, i);
        assert_ptr_equal(ddm_views_lookup(s, "t", key), views[i]);
        assert_string_equal(ddm_view_vm_key(views[i]), key);
        assert_null(ddm_views_create(s, "p", key, "t", DDM_VIEW_TABLE, NULL)); /* taken */
    }
    named = ddm_views_list_named(s, "t");
    assert_int_equal(named->len, N_COLLIDING);
    g_ptr_array_free(named, TRUE);
    ddm_views_destroy(s, views[7]);
    colliding_key(key, 7);
    assert_null(ddm_views_lookup(s, "t", key));
    colliding_key(key, 8);
    assert_ptr_equal(ddm_views_lookup(s, "t", key), views[8]);

    /* colliding field names: the index past a few fields finds each one
     * (a second value for a key replaces the first) */
    assert_int_equal(ddm_view_begin(rec), 0);
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < N_COLLIDING; i++) {
            colliding_key(key, i);
            assert_int_equal(ddm_view_field_int(rec, key, round * 1000 + i), 0);
        }
    assert_int_equal(ddm_view_commit(rec), 0);
    n = ddm_view_to_json(rec, FALSE);
    a = json_object_get_array_member(json_node_get_object(n), "fields");
    assert_int_equal(json_array_get_length(a), N_COLLIDING);
    for (guint i = 0; i < N_COLLIDING; i++) {
        JsonObject *f = json_array_get_object_element(a, i);
        colliding_key(key, (int)i);
        assert_string_equal(json_object_get_string_member(f, "key"), key);
        assert_int_equal(json_object_get_int_member(f, "value"), 1000 + i);
    }
    json_node_unref(n);

    /* colliding column names: equal sets are one, different ones are not */
    {
        char names[2][2 * COLLIDING_BLOCKS + 1];
        ddm_column c0[] = {{names[0], DDM_VAL_INT, NULL}};
        ddm_column c1[] = {{names[1], DDM_VAL_INT, NULL}};
        colliding_key(names[0], 1);
        colliding_key(names[1], 2);
        assert_int_equal(ddm_view_set_columns(views[0], c0, 1), 0);
        assert_int_equal(ddm_view_set_columns(views[1], c1, 1), 0);
        assert_int_equal(ddm_view_set_columns(views[2], c0, 1), 0);
        assert_ptr_equal(views[0]->schema, views[2]->schema);
        assert_ptr_not_equal(views[0]->schema, views[1]->schema);
    }
    ddm_views_free(s);
}

/* Column JSON of @v: "name/type/unit,..." */
static char *columns_of(const ddm_view *v)
{
    JsonNode *n = ddm_view_to_json(v, FALSE);
    JsonArray *a = json_object_get_array_member(json_node_get_object(n), "columns");
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *c = json_array_get_object_element(a, i);
        g_string_append_printf(out, "%s/%s/%s,", json_object_get_string_member(c, "name"),
                               json_object_get_string_member(c, "type"),
                               json_object_has_member(c, "unit") &&
                                       !json_object_get_null_member(c, "unit")
                                   ? json_object_get_string_member(c, "unit")
                                   : "-");
    }
    json_node_unref(n);
    return g_string_free(out, FALSE);
}

/* The same columns in many views are one interned set (view_content.c):
 * each view still shows its own, a view with another unit or type gets
 * its own set, and a view going away leaves the others' columns whole. */
static void test_views_columns_interned(void **state)
{
    DdmViews *s = ddm_views_new();
    static const ddm_column cols[] = {{"id", DDM_VAL_INT, NULL}, {"size", DDM_VAL_INT, "B"}};
    static const ddm_column other_unit[] = {{"id", DDM_VAL_INT, NULL}, {"size", DDM_VAL_INT, "kB"}};
    static const ddm_column other_type[] = {{"id", DDM_VAL_STR, NULL}, {"size", DDM_VAL_INT, "B"}};
    ddm_view *v[5];
    char *txt;
    (void)state;

    for (int i = 0; i < 3; i++) {
        char vm[16];
        g_snprintf(vm, sizeof vm, "vm%d", i);
        v[i] = ddm_views_create(s, "p", vm, "t", DDM_VIEW_TABLE, NULL);
        assert_int_equal(ddm_view_set_columns(v[i], cols, 2), 0);
    }
    v[3] = ddm_views_create(s, "p", "vm3", "t", DDM_VIEW_TABLE, NULL);
    assert_int_equal(ddm_view_set_columns(v[3], other_unit, 2), 0);
    v[4] = ddm_views_create(s, "p", "vm4", "t", DDM_VIEW_TABLE, NULL);
    assert_int_equal(ddm_view_set_columns(v[4], other_type, 2), 0);
    ddm_views_destroy(s, v[0]);
    assert_int_equal(ddm_view_begin(v[1]), 0);
    assert_int_equal(ddm_view_row(v[1]), 0);
    assert_int_equal(ddm_view_cell_int(v[1], 1), 0);
    assert_int_equal(ddm_view_cell_int(v[1], 2), 0);
    assert_int_equal(ddm_view_commit(v[1]), 0);
    /* one set for the same columns, another for another unit or type */
    assert_ptr_equal(v[1]->schema, v[2]->schema);
    assert_ptr_not_equal(v[3]->schema, v[1]->schema);
    assert_ptr_not_equal(v[4]->schema, v[1]->schema);
    assert_ptr_not_equal(v[4]->schema, v[3]->schema);
    txt = columns_of(v[1]);
    assert_string_equal(txt, "id/int/-,size/int/B,");
    g_free(txt);
    ddm_views_destroy(s, v[1]);
    txt = columns_of(v[2]);
    assert_string_equal(txt, "id/int/-,size/int/B,");
    g_free(txt);
    txt = columns_of(v[3]);
    assert_string_equal(txt, "id/int/-,size/int/kB,");
    g_free(txt);
    txt = columns_of(v[4]);
    assert_string_equal(txt, "id/str/-,size/int/B,");
    g_free(txt);
    /* a set made again after all its users went is a fresh one */
    ddm_views_destroy(s, v[2]);
    v[0] = ddm_views_create(s, "p", "vm0", "t", DDM_VIEW_TABLE, NULL);
    assert_int_equal(ddm_view_set_columns(v[0], cols, 2), 0);
    txt = columns_of(v[0]);
    assert_string_equal(txt, "id/int/-,size/int/B,");
    g_free(txt);
    ddm_views_free(s);
}

/* set_columns shares the set its description's views were last given when
 * the columns are the same (an empty unit being none); columns a plugin
 * gives that storing changes (invalid UTF-8, a name past the string cap)
 * are stored changed in every view, and still one set; other columns in
 * between do not split the first ones' set. */
static void test_views_columns_remembered(void **state)
{
    DdmViews *s = ddm_views_new();
    static const ddm_column a[] = {{"id", DDM_VAL_INT, ""}, {"size", DDM_VAL_INT, "B"}};
    static const ddm_column a_null_unit[] = {{"id", DDM_VAL_INT, NULL}, {"size", DDM_VAL_INT, "B"}};
    static const ddm_column b[] = {{"id", DDM_VAL_INT, NULL}, {"size", DDM_VAL_INT, "kB"}};
    static const ddm_column bad[] = {{"caf\xe9", DDM_VAL_STR, NULL}};
    char *long_name = g_strnfill(DDM_VIEW_MAX_STRING + 10, 'x');
    ddm_column longc[] = {{long_name, DDM_VAL_INT, NULL}};
    ddm_view *v[8];
    char *txt, *want;
    (void)state;

    for (int i = 0; i < 8; i++) {
        char vm[16];
        g_snprintf(vm, sizeof vm, "vm%d", i);
        v[i] = ddm_views_create(s, "p", vm, "t", DDM_VIEW_TABLE, NULL);
        assert_non_null(v[i]);
    }
    /* the description holds the set its views were last given (all eight
     * views share one description: same owner, name, title and kind) */
    assert_ptr_equal(v[0]->desc, v[7]->desc);
    assert_null(v[0]->desc->columns);
    assert_int_equal(ddm_view_set_columns(v[0], a, 2), 0);
    assert_non_null(v[0]->schema);
    assert_ptr_equal(v[0]->desc->columns, v[0]->schema);
    assert_int_equal(ddm_view_set_columns(v[1], b, 2), 0);
    assert_ptr_equal(v[1]->desc->columns, v[1]->schema);
    assert_int_equal(ddm_view_set_columns(v[2], a_null_unit, 2), 0);
    assert_ptr_equal(v[2]->desc->columns, v[0]->schema);
    assert_int_equal(ddm_view_set_columns(v[3], a, 2), 0);
    assert_ptr_equal(v[2]->schema, v[0]->schema);
    assert_ptr_equal(v[3]->schema, v[0]->schema);
    assert_ptr_not_equal(v[1]->schema, v[0]->schema);
    txt = columns_of(v[3]);
    assert_string_equal(txt, "id/int/-,size/int/B,");
    g_free(txt);
    txt = columns_of(v[1]);
    assert_string_equal(txt, "id/int/-,size/int/kB,");
    g_free(txt);

    assert_int_equal(ddm_view_set_columns(v[4], bad, 1), 0);
    assert_int_equal(ddm_view_set_columns(v[5], bad, 1), 0);
    assert_ptr_equal(v[4]->schema, v[5]->schema);
    txt = columns_of(v[5]);
    assert_string_equal(txt, "caf\xef\xbf\xbd/str/-,");
    g_free(txt);

    assert_int_equal(ddm_view_set_columns(v[6], longc, 1), 0);
    assert_int_equal(ddm_view_set_columns(v[7], longc, 1), 0);
    assert_ptr_equal(v[6]->schema, v[7]->schema);
    txt = columns_of(v[7]);
    want = g_strdup_printf("%.*s/int/-,", (int)DDM_VIEW_MAX_STRING, long_name);
    assert_string_equal(txt, want);
    g_free(want);
    g_free(txt);

    /* the first set again, after the others: still the first one */
    assert_ptr_not_equal(v[1]->desc->columns, v[0]->schema);
    assert_int_equal(ddm_view_set_columns(v[1], a, 2), 0);
    assert_ptr_equal(v[1]->schema, v[0]->schema);
    assert_ptr_equal(v[1]->desc->columns, v[0]->schema);
    g_free(long_name);
    ddm_views_free(s);
}

/* "vm KEY NAME" of each view of @a, ";"-separated ("-" for global). (transfer full) */
static char *keys_names_of(GPtrArray *a)
{
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < a->len; i++) {
        const char *key = ddm_view_vm_key(a->pdata[i]);
        g_string_append_printf(out, "%s %s;", key ? key : "-", ddm_view_name(a->pdata[i]));
    }
    return g_string_free(out, FALSE);
}

/* The views of one name (a server's answer to `view NAME`) come in
 * ddm_views_list's order: global first, then by VM key (strcmp: "vm10"
 * before "vm2"), whatever order they were created in, and exactly those
 * of ddm_views_list with that name; a name whose views all went has none,
 * and comes back with a new view. */
static void test_views_list_named(void **state)
{
    DdmViews *s = ddm_views_new();
    static const char *const keys[] = {"vm2", "b", "vm10", NULL, "a"};
    GPtrArray *named, *all;
    char *txt;
    guint j = 0;
    (void)state;

    for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
        assert_non_null(ddm_views_create(s, "p", keys[i], "zz", DDM_VIEW_RECORD, NULL));
        assert_non_null(ddm_views_create(s, "p", keys[i], "headline", DDM_VIEW_RECORD, NULL));
        assert_non_null(ddm_views_create(s, "q", keys[i], "a", DDM_VIEW_TABLE, NULL));
    }
    named = ddm_views_list_named(s, "headline");
    txt = keys_names_of(named);
    assert_string_equal(txt, "- headline;a headline;b headline;vm10 headline;vm2 headline;");
    g_free(txt);
    /* the same views, in the same order, as ddm_views_list's of that name */
    all = ddm_views_list(s);
    assert_int_equal(all->len, 15);
    for (guint i = 0; i < all->len; i++) {
        if (strcmp(ddm_view_name(all->pdata[i]), "headline") != 0)
            continue;
        assert_true(j < named->len);
        assert_ptr_equal(all->pdata[i], named->pdata[j++]);
    }
    assert_int_equal(j, named->len);
    g_ptr_array_unref(all);
    g_ptr_array_unref(named);

    named = ddm_views_list_named(s, "nope");
    assert_int_equal(named->len, 0);
    g_ptr_array_unref(named);
    named = ddm_views_list_named(s, NULL);
    assert_int_equal(named->len, 0);
    g_ptr_array_unref(named);

    ddm_views_destroy_vm(s, "vm10");
    named = ddm_views_list_named(s, "a");
    txt = keys_names_of(named);
    assert_string_equal(txt, "- a;a a;b a;vm2 a;");
    g_free(txt);
    g_ptr_array_unref(named);
    assert_null(ddm_views_lookup(s, "zz", "vm10"));
    assert_non_null(ddm_views_lookup(s, "zz", "vm2"));

    /* every "headline" gone: none, and lookups find none; a new one comes back */
    ddm_views_destroy_owner(s, "p");
    named = ddm_views_list_named(s, "headline");
    assert_int_equal(named->len, 0);
    g_ptr_array_unref(named);
    assert_null(ddm_views_lookup(s, "headline", NULL));
    assert_non_null(ddm_views_create(s, "p", "vm1", "headline", DDM_VIEW_RECORD, NULL));
    named = ddm_views_list_named(s, "headline");
    txt = keys_names_of(named);
    assert_string_equal(txt, "vm1 headline;");
    g_free(txt);
    g_ptr_array_unref(named);
    all = ddm_views_list(s);
    assert_int_equal(all->len, 5);
    g_ptr_array_unref(all);
    ddm_views_free(s);
}

static void test_views_blob(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *v = ddm_views_create(s, "screen", "vm", "screenshot", DDM_VIEW_BLOB, NULL);
    guint8 data[] = {0x89, 'P', 'N', 'G', 0, 1, 2};
    const guint8 *got;
    gsize len;
    const char *mt;

    assert_null(ddm_view_blob_data(v, &len, &mt));
    assert_int_equal(len, 0);
    assert_int_equal(ddm_view_blob(v, "image/png", data, sizeof data), -EPROTO);
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_blob(v, "image/png", data, sizeof data), 0);
    data[0] = 0; /* the store copied */
    assert_int_equal(ddm_view_blob(v, "image/png", NULL, 3), -EINVAL);
    assert_int_equal(ddm_view_blob(v, "image/png", data, DDM_VIEW_MAX_BLOB + 1), -EFBIG);
    assert_null(ddm_view_blob_data(v, &len, &mt)); /* not committed yet */
    assert_int_equal(ddm_view_field_int(v, "k", 1), -EINVAL);
    assert_int_equal(ddm_view_commit(v), 0);
    got = ddm_view_blob_data(v, &len, &mt);
    assert_non_null(got);
    assert_int_equal(len, 7);
    assert_int_equal(got[0], 0x89);
    assert_memory_equal(got + 1, "PNG\0\1\2", 6);
    assert_string_equal(mt, "image/png");

    {
        JsonNode *n = ddm_view_to_json(v, FALSE);
        JsonObject *o = json_node_get_object(n);
        assert_string_equal(json_object_get_string_member(o, "kind"), "blob");
        assert_string_equal(json_object_get_string_member(o, "media_type"), "image/png");
        assert_int_equal(json_object_get_int_member(o, "size"), 7);
        assert_false(json_object_has_member(o, "data_base64"));
        json_node_unref(n);
        n = ddm_view_to_json(v, TRUE);
        o = json_node_get_object(n);
        {
            gsize dlen;
            guchar *dec = g_base64_decode(json_object_get_string_member(o, "data_base64"), &dlen);
            assert_int_equal(dlen, 7);
            assert_int_equal(dec[0], 0x89);
            assert_memory_equal(dec + 1, "PNG\0\1\2", 6);
            g_free(dec);
        }
        json_node_unref(n);
    }
    /* empty blob, missing media type */
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_blob(v, NULL, NULL, 0), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    got = ddm_view_blob_data(v, &len, &mt);
    assert_non_null(got);
    assert_int_equal(len, 0);
    assert_string_equal(mt, "application/octet-stream");
    ddm_views_free(s);
}

static void test_views_caps(void **state)
{
    ddm_view *v = ddm_view_new_detached("p", "caps", DDM_VIEW_TABLE, NULL);
    const ddm_column one[] = {{"s", DDM_VAL_STR, NULL}};
    gsize big_len = DDM_VIEW_MAX_STRING + 100;
    char *big = g_malloc(big_len + 1);
    JsonNode *n;
    const char *cell;

    /* a long string: cut at a UTF-8 boundary ("é" is 2 bytes, so an odd
     * cap position falls inside a character) */
    memset(big, 'a', big_len);
    big[0] = 'x';
    for (gsize i = 1; i + 1 < big_len; i += 2) {
        big[i] = '\xc3';
        big[i + 1] = '\xa9';
    }
    big[big_len] = '\0';
    assert_int_equal(ddm_view_set_columns(v, one, 1), 0);
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_str(v, big), -E2BIG);
    assert_int_equal(ddm_view_commit(v), 0); /* truncation is not an error of the content */
    n = ddm_view_to_json(v, FALSE);
    cell = json_array_get_string_element(
        json_array_get_array_element(json_object_get_array_member(json_node_get_object(n), "rows"), 0), 0);
    assert_true(strlen(cell) <= DDM_VIEW_MAX_STRING);
    assert_true(strlen(cell) >= DDM_VIEW_MAX_STRING - 3);
    assert_true(g_utf8_validate(cell, -1, NULL));
    json_node_unref(n);
    g_free(big);

    /* invalid UTF-8 is repaired, never passed on */
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_str(v, "ok\xff\xfe end"), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    n = ddm_view_to_json(v, FALSE);
    cell = json_array_get_string_element(
        json_array_get_array_element(json_object_get_array_member(json_node_get_object(n), "rows"), 0), 0);
    assert_true(g_utf8_validate(cell, -1, NULL));
    assert_true(g_str_has_prefix(cell, "ok"));
    assert_true(g_str_has_suffix(cell, " end"));
    {
        char *text = json_to_string(n, FALSE);
        assert_true(g_utf8_validate(text, -1, NULL));
        g_free(text);
    }
    json_node_unref(n);
    ddm_view_free_detached(v);

    /* the row cap: rows beyond are dropped, the rest published */
    v = ddm_view_new_detached("p", "rows", DDM_VIEW_TABLE, NULL);
    {
        const ddm_column ic[] = {{"i", DDM_VAL_INT, NULL}};
        int rc = 0;
        assert_int_equal(ddm_view_set_columns(v, ic, 1), 0);
        assert_int_equal(ddm_view_begin(v), 0);
        for (guint i = 0; i < DDM_VIEW_MAX_ROWS; i++) {
            rc |= ddm_view_row(v);
            rc |= ddm_view_cell_int(v, i);
        }
        assert_int_equal(rc, 0);
        assert_int_equal(ddm_view_row(v), -E2BIG);
        assert_int_equal(ddm_view_cell_int(v, 1), -E2BIG);
        assert_int_equal(ddm_view_row(v), -E2BIG);
        assert_int_equal(ddm_view_commit(v), 0);
        assert_int_equal(rows_of(v), DDM_VIEW_MAX_ROWS);
    }
    ddm_view_free_detached(v);

    /* the field cap */
    v = ddm_view_new_detached("p", "fields", DDM_VIEW_RECORD, NULL);
    assert_int_equal(ddm_view_begin(v), 0);
    for (guint i = 0; i < DDM_VIEW_MAX_FIELDS; i++) {
        char key[16];
        g_snprintf(key, sizeof key, "k%u", i);
        assert_int_equal(ddm_view_field_int(v, key, i), 0);
    }
    assert_int_equal(ddm_view_field_int(v, "one too many", 1), -E2BIG);
    assert_int_equal(ddm_view_field_int(v, "k0", 5), 0); /* replacing still works */
    assert_int_equal(ddm_view_commit(v), 0);
    ddm_view_free_detached(v);
}

static void test_views_listeners(void **state)
{
    DdmViews *s = ddm_views_new();
    Recorder r;
    guint id;
    ddm_view *v;

    recorder_init(&r, s);
    id = ddm_views_add_listener(s, on_change, &r);
    assert_true(id > 0);
    v = ddm_views_create(s, "p", "vm", "t", DDM_VIEW_RECORD, NULL);
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_field_int(v, "a", 1), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    ddm_views_destroy(s, v);
    assert_int_equal(r.events->len, 3);
    assert_int_equal(ev(&r, 0)->change, DDM_VIEW_ADDED);
    assert_int_equal(ev(&r, 0)->version, 0);
    assert_int_equal(ev(&r, 1)->change, DDM_VIEW_CHANGED);
    assert_int_equal(ev(&r, 1)->version, 1);
    assert_int_equal(ev(&r, 2)->change, DDM_VIEW_REMOVED);
    assert_string_equal(ev(&r, 2)->name, "t");

    ddm_views_remove_listener(s, id);
    ddm_views_remove_listener(s, id);   /* twice: ignored */
    ddm_views_remove_listener(s, 9999); /* unknown: ignored */
    v = ddm_views_create(s, "p", "vm", "t", DDM_VIEW_RECORD, NULL);
    assert_int_equal(r.events->len, 3);
    recorder_clear(&r);

    /* detached views and failed commits notify nobody */
    recorder_init(&r, s);
    ddm_views_add_listener(s, on_change, &r);
    {
        ddm_view *d = ddm_view_new_detached("p", "result", DDM_VIEW_RECORD, "Result");
        assert_int_equal(ddm_view_begin(d), 0);
        assert_int_equal(ddm_view_field_str(d, "status", "ok"), 0);
        assert_int_equal(ddm_view_commit(d), 0);
        ddm_view_free_detached(d);
    }
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    assert_int_equal(r.events->len, 1);
    recorder_clear(&r);
    ddm_views_free(s);
}

static void test_views_listener_changes_during_notify(void **state)
{
    DdmViews *s = ddm_views_new();
    Recorder first, second, third;
    guint id_second;
    ddm_view *v;

    recorder_init(&first, s);
    recorder_init(&second, s);
    recorder_init(&third, s);
    ddm_views_add_listener(s, on_change, &first);
    id_second = ddm_views_add_listener(s, on_change, &second);
    /* the first listener removes the second before it runs, and adds a third */
    first.remove_listener_id = id_second;
    first.add_listener = TRUE;
    first.other = &third;
    v = ddm_views_create(s, "p", NULL, "t", DDM_VIEW_RECORD, NULL);
    assert_non_null(v);
    assert_int_equal(first.events->len, 1);
    assert_int_equal(second.events->len, 0);
    assert_int_equal(third.events->len, 0); /* added during: next change only */

    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    assert_int_equal(first.events->len, 2);
    assert_int_equal(second.events->len, 0);
    assert_int_equal(third.events->len, 1);

    /* a listener destroying the view it is told about */
    third.destroy_on_change = TRUE;
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_commit(v), 0);
    assert_null(ddm_views_lookup(s, "t", NULL));
    /* first: ADDED, CHANGED, CHANGED, REMOVED (nested, after CHANGED started) */
    assert_int_equal(first.events->len, 4);
    assert_int_equal(ev(&first, 3)->change, DDM_VIEW_REMOVED);
    assert_int_equal(ev(&third, 1)->change, DDM_VIEW_CHANGED);
    assert_int_equal(ev(&third, 2)->change, DDM_VIEW_REMOVED);

    recorder_clear(&first);
    recorder_clear(&second);
    recorder_clear(&third);
    ddm_views_free(s);
}

static void test_views_watches(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *a = ddm_views_create(s, "p", "vm1", "threads", DDM_VIEW_TABLE, NULL);
    ddm_view *b = ddm_views_create(s, "p", "vm2", "threads", DDM_VIEW_TABLE, NULL);
    ddm_view *g = ddm_views_create(s, "core", NULL, "vms", DDM_VIEW_TABLE, NULL);
    ddm_view *d = ddm_view_new_detached("p", "threads", DDM_VIEW_TABLE, NULL);
    guint w_all, w_threads, w_vm1, w_exact, w_other;

    assert_int_equal(ddm_view_watchers(a), 0);
    w_all = ddm_views_watch(s, NULL, NULL);
    assert_int_equal(ddm_view_watchers(a), 1);
    assert_int_equal(ddm_view_watchers(g), 1);
    w_threads = ddm_views_watch(s, "threads", NULL);
    w_vm1 = ddm_views_watch(s, NULL, "vm1");
    w_exact = ddm_views_watch(s, "threads", "vm1");
    w_other = ddm_views_watch(s, "heap", NULL);
    assert_int_equal(ddm_view_watchers(a), 4);
    assert_int_equal(ddm_view_watchers(b), 2);
    assert_int_equal(ddm_view_watchers(g), 1);
    assert_int_equal(ddm_view_watchers(d), 0);
    assert_int_equal(ddm_view_watchers(NULL), 0);
    ddm_views_unwatch(s, w_threads);
    assert_int_equal(ddm_view_watchers(a), 3);
    assert_int_equal(ddm_view_watchers(b), 1);
    ddm_views_unwatch(s, w_threads); /* twice: ignored */
    ddm_views_unwatch(s, w_all);
    ddm_views_unwatch(s, w_vm1);
    ddm_views_unwatch(s, w_exact);
    ddm_views_unwatch(s, w_other);
    assert_int_equal(ddm_view_watchers(a), 0);
    /* a watch made before the view exists counts for it */
    w_all = ddm_views_watch(s, "later", "vm3");
    {
        ddm_view *l = ddm_views_create(s, "p", "vm3", "later", DDM_VIEW_RECORD, NULL);
        assert_int_equal(ddm_view_watchers(l), 1);
    }
    ddm_view_free_detached(d);
    ddm_views_free(s);
}

static void test_views_destroy_vm_owner(void **state)
{
    DdmViews *s = ddm_views_new();
    Recorder r;

    recorder_init(&r, s);
    ddm_views_create(s, "threads", "vm1", "threads", DDM_VIEW_TABLE, NULL);
    ddm_views_create(s, "heap", "vm1", "heap", DDM_VIEW_TABLE, NULL);
    ddm_views_create(s, "threads", "vm2", "threads", DDM_VIEW_TABLE, NULL);
    ddm_views_create(s, "heap", "vm2", "heap", DDM_VIEW_TABLE, NULL);
    ddm_views_create(s, "threads", NULL, "summary", DDM_VIEW_RECORD, NULL);
    ddm_views_create(s, "core", NULL, "vms", DDM_VIEW_TABLE, NULL);
    ddm_views_add_listener(s, on_change, &r);

    ddm_views_destroy_vm(s, "vm1");
    assert_int_equal(r.events->len, 2);
    assert_int_equal(ev(&r, 0)->change, DDM_VIEW_REMOVED);
    assert_int_equal(ev(&r, 1)->change, DDM_VIEW_REMOVED);
    assert_null(ddm_views_lookup(s, "threads", "vm1"));
    assert_null(ddm_views_lookup(s, "heap", "vm1"));
    assert_non_null(ddm_views_lookup(s, "threads", "vm2"));

    ddm_views_destroy_owner(s, "threads");
    assert_int_equal(r.events->len, 4);
    assert_null(ddm_views_lookup(s, "threads", "vm2"));
    assert_null(ddm_views_lookup(s, "summary", NULL));
    assert_non_null(ddm_views_lookup(s, "heap", "vm2"));
    assert_non_null(ddm_views_lookup(s, "vms", NULL));

    ddm_views_destroy_vm(s, "nothing");
    ddm_views_destroy_owner(s, "nobody");
    ddm_views_destroy_vm(s, NULL);
    ddm_views_destroy_owner(s, NULL);
    assert_int_equal(r.events->len, 4);

    /* a listener that destroys other views while a bulk removal runs */
    r.destroy_on_change = FALSE;
    {
        GPtrArray *l = ddm_views_list(s);
        assert_int_equal(l->len, 2);
        g_ptr_array_free(l, TRUE);
    }
    ddm_views_destroy_owner(s, "heap");
    ddm_views_destroy_owner(s, "core");
    {
        GPtrArray *l = ddm_views_list(s);
        assert_int_equal(l->len, 0);
        g_ptr_array_free(l, TRUE);
    }
    recorder_clear(&r);
    ddm_views_free(s);
}

/* A VM's views are found through the descriptions: one view per name and
 * VM, whatever the owner or title; descriptions of other VMs' views with
 * the same name, and global views, find nothing of this VM. */
static void test_views_destroy_vm_by_description(void **state)
{
    DdmViews *s = ddm_views_new();
    Recorder r;
    (void)state;

    recorder_init(&r, s);
    ddm_views_create(s, "p1", "vm1", "a", DDM_VIEW_TABLE, "A of vm1");
    ddm_views_create(s, "p1", "vm1", "b", DDM_VIEW_RECORD, NULL);
    ddm_views_create(s, "p2", "vm2", "a", DDM_VIEW_TABLE, "another title");
    ddm_views_create(s, "p2", "vm2", "c", DDM_VIEW_TABLE, NULL);
    ddm_views_create(s, "p2", NULL, "a", DDM_VIEW_TABLE, NULL);
    for (int i = 0; i < 50; i++) { /* more VMs with the same descriptions */
        char key[16];
        g_snprintf(key, sizeof key, "other%d", i);
        ddm_views_create(s, "p1", key, "a", DDM_VIEW_TABLE, "A of vm1");
    }
    ddm_views_add_listener(s, on_change, &r);

    ddm_views_destroy_vm(s, "vm1");
    assert_int_equal(r.events->len, 2); /* "a" once, though two descriptions name it */
    assert_null(ddm_views_lookup(s, "a", "vm1"));
    assert_null(ddm_views_lookup(s, "b", "vm1"));
    assert_non_null(ddm_views_lookup(s, "a", "vm2"));
    assert_non_null(ddm_views_lookup(s, "c", "vm2"));
    assert_non_null(ddm_views_lookup(s, "a", NULL));
    assert_non_null(ddm_views_lookup(s, "a", "other7"));

    ddm_views_destroy_vm(s, "vm2");
    assert_int_equal(r.events->len, 4);
    assert_null(ddm_views_lookup(s, "a", "vm2"));
    assert_null(ddm_views_lookup(s, "c", "vm2"));
    assert_non_null(ddm_views_lookup(s, "a", NULL));
    {
        GPtrArray *l = ddm_views_list(s);
        assert_int_equal(l->len, 51);
        g_ptr_array_free(l, TRUE);
    }
    recorder_clear(&r);
    ddm_views_free(s);
}

typedef struct Chain {
    DdmViews *store;
    int removed;
} Chain;

/* On each REMOVED, destroy every other view of the store. */
static void destroy_all_on_remove(ddm_view *view, DdmViewChange change, gpointer ud)
{
    Chain *c = ud;
    if (change != DDM_VIEW_REMOVED)
        return;
    c->removed++;
    GPtrArray *l = ddm_views_list(c->store);
    for (guint i = 0; i < l->len; i++)
        ddm_views_destroy(c->store, g_ptr_array_index(l, i));
    g_ptr_array_free(l, TRUE);
}

static void test_views_destroy_reentrant(void **state)
{
    DdmViews *s = ddm_views_new();
    Chain c = {s, 0};

    ddm_views_create(s, "p", "vm1", "a", DDM_VIEW_TABLE, NULL);
    ddm_views_create(s, "p", "vm1", "b", DDM_VIEW_TABLE, NULL);
    ddm_views_create(s, "p", "vm1", "c", DDM_VIEW_TABLE, NULL);
    ddm_views_add_listener(s, destroy_all_on_remove, &c);
    ddm_views_destroy_vm(s, "vm1");
    assert_int_equal(c.removed, 3); /* each exactly once */
    ddm_views_free(s);
}

static void test_views_detached(void **state)
{
    ddm_view *v = ddm_view_new_detached("gc", "result", DDM_VIEW_TABLE, "GC");
    JsonNode *n;
    JsonObject *o;

    assert_non_null(v);
    assert_null(ddm_view_new_detached("gc", "", DDM_VIEW_TABLE, NULL));
    assert_null(ddm_view_vm_key(v));
    assert_int_equal(ddm_view_set_columns(v, demo_cols, 4), 0);
    assert_int_equal(ddm_view_begin(v), 0);
    add_demo_row(v, 1, "x", 2, 1);
    assert_int_equal(ddm_view_commit(v), 0);
    n = ddm_view_to_json(v, FALSE);
    o = json_node_get_object(n);
    assert_string_equal(json_object_get_string_member(o, "owner"), "gc");
    assert_true(json_object_get_null_member(o, "vm"));
    assert_int_equal(json_array_get_length(json_object_get_array_member(o, "rows")), 1);
    json_node_unref(n);
    ddm_view_free_detached(v);
    ddm_view_free_detached(NULL);
}

static void test_views_json_shape(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *v = ddm_views_create(s, "core", "127.0.0.1:8000", "vms", DDM_VIEW_TABLE, "VMs");
    JsonNode *n;
    JsonObject *o;
    JsonArray *cols, *rows, *row;
    static const char *names[] = {"pid", "name", "cpu", "ddm"};
    static const char *types[] = {"int", "str", "double", "bool"};

    assert_int_equal(ddm_view_set_columns(v, demo_cols, 4), 0);
    assert_int_equal(ddm_view_begin(v), 0);
    add_demo_row(v, 1234, "com.example \"q\"", 12.25, 1);
    assert_int_equal(ddm_view_row(v), 0);
    assert_int_equal(ddm_view_cell_int(v, INT64_MAX), 0);
    assert_int_equal(ddm_view_cell_str(v, NULL), 0);
    assert_int_equal(ddm_view_cell_double(v, NAN), 0);
    assert_int_equal(ddm_view_cell_bool(v, 0), 0);
    assert_int_equal(ddm_view_commit(v), 0);

    n = ddm_view_to_json(v, TRUE);
    assert_int_equal(JSON_NODE_TYPE(n), JSON_NODE_OBJECT);
    o = json_node_get_object(n);
    assert_string_equal(json_object_get_string_member(o, "name"), "vms");
    assert_string_equal(json_object_get_string_member(o, "vm"), "127.0.0.1:8000");
    assert_string_equal(json_object_get_string_member(o, "owner"), "core");
    assert_string_equal(json_object_get_string_member(o, "title"), "VMs");
    assert_string_equal(json_object_get_string_member(o, "kind"), "table");
    assert_int_equal(json_object_get_int_member(o, "version"), 2);
    assert_false(json_object_has_member(o, "fields"));
    assert_false(json_object_has_member(o, "data_base64"));
    cols = json_object_get_array_member(o, "columns");
    assert_int_equal(json_array_get_length(cols), 4);
    for (guint i = 0; i < 4; i++) {
        JsonObject *c = json_array_get_object_element(cols, i);
        assert_string_equal(json_object_get_string_member(c, "name"), names[i]);
        assert_string_equal(json_object_get_string_member(c, "type"), types[i]);
        if (i == 2)
            assert_string_equal(json_object_get_string_member(c, "unit"), "%");
        else
            assert_true(json_object_get_null_member(c, "unit"));
    }
    rows = json_object_get_array_member(o, "rows");
    assert_int_equal(json_array_get_length(rows), 2);
    row = json_array_get_array_element(rows, 0);
    assert_int_equal(json_array_get_length(row), 4);
    assert_int_equal(json_array_get_int_element(row, 0), 1234);
    assert_string_equal(json_array_get_string_element(row, 1), "com.example \"q\"");
    assert_true(json_array_get_double_element(row, 2) == 12.25);
    assert_true(json_array_get_boolean_element(row, 3));
    row = json_array_get_array_element(rows, 1);
    assert_true(json_array_get_int_element(row, 0) == INT64_MAX);
    assert_true(json_array_get_null_element(row, 1));
    assert_true(json_array_get_null_element(row, 2)); /* NaN has no JSON form */
    assert_false(json_array_get_boolean_element(row, 3));

    /* it round-trips through text */
    {
        char *text = json_to_string(n, FALSE);
        JsonParser *p = json_parser_new();
        assert_true(json_parser_load_from_data(p, text, -1, NULL));
        assert_true(json_node_equal(n, json_parser_get_root(p)));
        g_object_unref(p);
        g_free(text);
    }
    json_node_unref(n);

    /* a fresh record view */
    v = ddm_views_create(s, "p", NULL, "rec", DDM_VIEW_RECORD, NULL);
    n = ddm_view_to_json(v, FALSE);
    o = json_node_get_object(n);
    assert_string_equal(json_object_get_string_member(o, "kind"), "record");
    assert_int_equal(json_object_get_int_member(o, "version"), 0);
    assert_int_equal(json_array_get_length(json_object_get_array_member(o, "fields")), 0);
    assert_false(json_object_has_member(o, "rows"));
    json_node_unref(n);
    ddm_views_free(s);
}

static void test_views_commit_warns_once(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *v = ddm_views_create(s, "plug", "vm1", "t", DDM_VIEW_TABLE, NULL);

    warnings_seen = 0;
    assert_int_equal(ddm_view_set_columns(v, demo_cols, 4), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ddm_view_begin(v), 0);
        assert_int_equal(ddm_view_row(v), 0);
        assert_int_equal(ddm_view_commit(v), -EINVAL);
    }
    assert_int_equal(warnings_seen, 1);
    ddm_views_free(s);
}

/* A 5000-VM "vms" table rebuilt many times: guards against accidental
 * quadratic behaviour (generous bound, also under sanitizers). */
static void test_views_rebuild_cost(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *v = ddm_views_create(s, "core", NULL, "vms", DDM_VIEW_TABLE, NULL);
    gint64 t0 = g_get_monotonic_time();

    assert_int_equal(ddm_view_set_columns(v, demo_cols, 4), 0);
    for (int round = 0; round < 20; round++) {
        assert_int_equal(ddm_view_begin(v), 0);
        for (int i = 0; i < 5000; i++) {
            char name[32];
            g_snprintf(name, sizeof name, "com.example.app%d", i);
            ddm_view_row(v);
            ddm_view_cell_int(v, 1000 + i);
            ddm_view_cell_str(v, name);
            ddm_view_cell_double(v, i * 0.1);
            ddm_view_cell_bool(v, i & 1);
        }
        assert_int_equal(ddm_view_commit(v), 0);
    }
    assert_int_equal(rows_of(v), 5000);
    assert_true(g_get_monotonic_time() - t0 < 20 * G_USEC_PER_SEC);
    ddm_views_free(s);
}

static void destroy_on_add(ddm_view *view, DdmViewChange change, gpointer ud)
{
    DdmViews *s = ud;
    if (change == DDM_VIEW_ADDED && strcmp(ddm_view_name(view), "doomed") == 0)
        ddm_views_destroy(s, view);
}

static void test_views_destroyed_while_added(void **state)
{
    DdmViews *s = ddm_views_new();
    Recorder r;

    recorder_init(&r, s);
    ddm_views_add_listener(s, destroy_on_add, s);
    ddm_views_add_listener(s, on_change, &r);
    assert_null(ddm_views_create(s, "p", NULL, "doomed", DDM_VIEW_TABLE, NULL));
    assert_null(ddm_views_lookup(s, "doomed", NULL));
    /* the second listener saw REMOVED (nested) and then ADDED of the same view */
    assert_int_equal(r.events->len, 2);
    assert_int_equal(ev(&r, 0)->change, DDM_VIEW_REMOVED);
    assert_int_equal(ev(&r, 1)->change, DDM_VIEW_ADDED);
    assert_non_null(ddm_views_create(s, "p", NULL, "kept", DDM_VIEW_TABLE, NULL));
    recorder_clear(&r);
    ddm_views_free(s);
}

static void test_views_bad_strings(void **state)
{
    ddm_view *v = ddm_view_new_detached("own\xff" "er", "t", DDM_VIEW_TABLE, "ti\xfetle");
    const ddm_column cols[] = {{"na\xc3me", DDM_VAL_STR, "u\x80"}};
    ddm_column *many = g_new0(ddm_column, DDM_VIEW_MAX_COLUMNS + 1);
    char *long_key = g_malloc(DDM_VIEW_MAX_STRING + 10);
    JsonNode *n;
    char *text;

    for (guint i = 0; i <= DDM_VIEW_MAX_COLUMNS; i++) {
        many[i].name = "c";
        many[i].type = DDM_VAL_INT;
    }
    assert_int_equal(ddm_view_set_columns(v, many, DDM_VIEW_MAX_COLUMNS + 1), -EINVAL);
    assert_int_equal(ddm_view_set_columns(v, many, DDM_VIEW_MAX_COLUMNS), 0);
    g_free(many);
    assert_int_equal(ddm_view_set_columns(v, cols, 1), 0);
    n = ddm_view_to_json(v, FALSE);
    text = json_to_string(n, FALSE);
    assert_true(g_utf8_validate(text, -1, NULL));
    g_free(text);
    json_node_unref(n);
    assert_true(g_utf8_validate(ddm_view_owner(v), -1, NULL));
    assert_true(g_utf8_validate(ddm_view_title(v), -1, NULL));
    ddm_view_free_detached(v);

    /* a key longer than the cap is cut, and a second one cut to the same
     * prefix replaces the first */
    v = ddm_view_new_detached("p", "r", DDM_VIEW_RECORD, NULL);
    memset(long_key, 'k', DDM_VIEW_MAX_STRING + 9);
    long_key[DDM_VIEW_MAX_STRING + 9] = '\0';
    assert_int_equal(ddm_view_begin(v), 0);
    assert_int_equal(ddm_view_field_int(v, long_key, 1), -E2BIG);
    long_key[DDM_VIEW_MAX_STRING + 5] = '\0';
    assert_int_equal(ddm_view_field_int(v, long_key, 2), -E2BIG);
    assert_int_equal(ddm_view_commit(v), 0);
    n = ddm_view_to_json(v, FALSE);
    {
        JsonArray *f = json_object_get_array_member(json_node_get_object(n), "fields");
        assert_int_equal(json_array_get_length(f), 1);
        assert_int_equal(strlen(json_object_get_string_member(json_array_get_object_element(f, 0), "key")),
                         DDM_VIEW_MAX_STRING);
        assert_int_equal(json_object_get_int_member(json_array_get_object_element(f, 0), "value"), 2);
    }
    json_node_unref(n);
    g_free(long_key);
    ddm_view_free_detached(v);
}

static int group_setup(void **state)
{
    g_log_set_writer_func(count_warnings, NULL, NULL);
    return 0;
}

static gboolean quit_loop(gpointer loop)
{
    g_main_loop_quit(loop);
    return G_SOURCE_REMOVE;
}

/* interest.c: a note watches the views for its seconds, a second note
 * renews it, the cap holds (the note noted longest ago gives way, a kept
 * one never), and the watch goes when the time is up. */
static void test_views_interest(void **state)
{
    (void)state;
    DdmViews *store = ddm_views_new();
    ddm_view *v = ddm_views_create(store, "p", "vm1", "threads", DDM_VIEW_TABLE, NULL);
    ddm_view *other = ddm_views_create(store, "p", "vm2", "threads", DDM_VIEW_TABLE, NULL);
    DdmViewInterest *in = ddm_view_interest_new(store, 1, 2);
    assert_int_equal(ddm_view_watchers(v), 0);
    assert_true(ddm_view_interest_note(in, "threads", "vm1"));
    assert_false(ddm_view_interest_note(in, "threads", "vm1")); /* renewed */
    assert_true(ddm_view_interest_has(in, "threads", "vm1"));
    assert_false(ddm_view_interest_has(in, "threads", NULL));
    assert_int_equal(ddm_view_watchers(v), 1);
    assert_int_equal(ddm_view_watchers(other), 0);
    g_usleep(2000);
    assert_true(ddm_view_interest_note(in, "threads", NULL)); /* every VM's */
    assert_int_equal(ddm_view_watchers(other), 1);
    assert_int_equal(ddm_view_watchers(v), 2);
    g_usleep(2000);
    /* the cap, 2: the note noted longest ago (threads of vm1) gives way */
    assert_true(ddm_view_interest_note(in, "heap", "vm1"));
    assert_int_equal(ddm_view_interest_count(in), 2);
    assert_false(ddm_view_interest_has(in, "threads", "vm1"));
    assert_true(ddm_view_interest_has(in, "threads", NULL));
    assert_int_equal(ddm_view_watchers(v), 1);
    /* a kept note (the VM list's) is not counted and never gives way */
    assert_true(ddm_view_interest_note_kept(in, "vms", NULL));
    assert_int_equal(ddm_view_interest_count(in), 3);
    for (int i = 0; i < 5; i++) {
        char key[16];
        g_snprintf(key, sizeof key, "vm%d", 10 + i);
        g_usleep(1000);
        assert_true(ddm_view_interest_note(in, "heap", key));
        assert_int_equal(ddm_view_interest_count(in), 3);
        assert_true(ddm_view_interest_has(in, "vms", NULL));
    }
    assert_false(ddm_view_interest_has(in, "threads", NULL));
    assert_int_equal(ddm_view_watchers(other), 0);
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    g_timeout_add(2600, quit_loop, loop); /* seconds timers are coalesced: up to 1 s late */
    g_main_loop_run(loop);
    g_main_loop_unref(loop);
    assert_int_equal(ddm_view_interest_count(in), 0);
    assert_int_equal(ddm_view_watchers(v), 0);
    assert_true(ddm_view_interest_note(in, "threads", "vm1"));
    ddm_view_interest_free(in); /* drops the watch */
    assert_int_equal(ddm_view_watchers(v), 0);
    ddm_views_free(store);
}

/* Table cells are stored without their type (it is the column's) and
 * nulls in a bitmap made with the first null: every value and every null
 * reads back in place, also when the first null comes after the cell
 * array has grown several times, and across every type. */
static void test_views_cells_compact(void **state)
{
    DdmViews *s = ddm_views_new();
    static const ddm_column cols[] = {{"i", DDM_VAL_INT, NULL}, {"d", DDM_VAL_DOUBLE, NULL},
                                      {"b", DDM_VAL_BOOL, NULL}, {"s", DDM_VAL_STR, NULL}};
    ddm_view *v = ddm_views_create(s, "p", "vm", "t", DDM_VIEW_TABLE, NULL);
    JsonNode *n;
    JsonArray *rows;
    (void)state;

    assert_int_equal(ddm_view_set_columns(v, cols, 4), 0);
    assert_int_equal(ddm_view_begin(v), 0);
    for (int r = 0; r < 300; r++) {
        gboolean null_row = r >= 97 && r % 7 == 0;
        char str[16];
        g_snprintf(str, sizeof str, "s%d", r);
        assert_int_equal(ddm_view_row(v), 0);
        if (null_row) {
            assert_int_equal(ddm_view_cell_str(v, NULL), 0); /* a null of each type */
            assert_int_equal(ddm_view_cell_str(v, NULL), 0);
            assert_int_equal(ddm_view_cell_str(v, NULL), 0);
            assert_int_equal(ddm_view_cell_str(v, NULL), 0);
        } else {
            assert_int_equal(ddm_view_cell_int(v, r == 1 ? G_MININT64 : -r), 0);
            assert_int_equal(ddm_view_cell_int(v, r), 0); /* INT into DOUBLE */
            assert_int_equal(ddm_view_cell_bool(v, r % 2), 0);
            assert_int_equal(ddm_view_cell_str(v, str), 0);
        }
    }
    assert_int_equal(ddm_view_commit(v), 0);
    /* sealed: its strings (~1.5 KB, built in doubling blocks) in one */
    assert_int_equal(ddm_views_content_string_blocks(v->committed), 1);
    n = ddm_view_to_json(v, FALSE);
    rows = json_object_get_array_member(json_node_get_object(n), "rows");
    assert_int_equal(json_array_get_length(rows), 300);
    for (guint r = 0; r < 300; r++) {
        JsonArray *row = json_array_get_array_element(rows, r);
        gboolean null_row = r >= 97 && r % 7 == 0;
        char str[16];
        g_snprintf(str, sizeof str, "s%u", r);
        assert_int_equal(json_array_get_length(row), 4);
        for (guint k = 0; k < 4; k++)
            assert_int_equal(JSON_NODE_HOLDS_NULL(json_array_get_element(row, k)), null_row);
        if (null_row)
            continue;
        assert_true(json_array_get_int_element(row, 0) == (r == 1 ? G_MININT64 : -(gint64)r));
        assert_true(json_array_get_double_element(row, 1) == (double)r);
        assert_int_equal(json_array_get_boolean_element(row, 2), r % 2);
        assert_string_equal(json_array_get_string_element(row, 3), str);
    }
    json_node_unref(n);
    ddm_views_free(s);
}

/* JSON text of @v without its "vm" member (equal views of two VMs compare equal). */
static char *json_text_sans_vm(const ddm_view *v)
{
    JsonNode *n = ddm_view_to_json(v, FALSE);
    char *txt;
    json_object_remove_member(json_node_get_object(n), "vm");
    txt = json_to_string(n, FALSE);
    json_node_unref(n);
    return txt;
}

/* A sealed record keeps only the strings it shows, in one block: values
 * replaced while building are dropped, and lookups by key (through the
 * index past 16 fields) still work on the moved keys. */
static void test_views_record_strings_compacted(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *v = ddm_views_create(s, "p", "vm", "r", DDM_VIEW_RECORD, NULL);
    gsize want = 0;
    char *txt;
    (void)state;

    assert_int_equal(ddm_view_begin(v), 0);
    for (int i = 0; i < 40; i++) {
        char key[16], val[64];
        g_snprintf(key, sizeof key, "key_%d", i);
        g_snprintf(val, sizeof val, "a long first value that is replaced later %d", i);
        assert_int_equal(ddm_view_field_str(v, key, val), 0);
    }
    for (int i = 0; i < 40; i++) {
        char key[16], val[16];
        g_snprintf(key, sizeof key, "key_%d", i);
        g_snprintf(val, sizeof val, "v%d", i);
        assert_int_equal(ddm_view_field_str(v, key, val), 0); /* replaces */
        want += strlen(key) + 1 + strlen(val) + 1;
    }
    assert_int_equal(ddm_view_commit(v), 0);
    assert_int_equal(ddm_views_content_string_blocks(v->committed), 1);
    assert_int_equal(v->committed->string_bytes, want);
    assert_int_equal(ddm_views_content_n_fields(v->committed), 40);
    for (int i = 0; i < 40; i++) {
        char key[16], val[16];
        Field *f;
        g_snprintf(key, sizeof key, "key_%d", i);
        g_snprintf(val, sizeof val, "v%d", i);
        f = ddm_views_content_field_find(v->committed, key);
        assert_non_null(f);
        assert_string_equal(f->u.s, val);
    }
    assert_null(ddm_views_content_field_find(v->committed, "key_40"));
    txt = json_text_sans_vm(v);
    assert_non_null(strstr(txt, "{\"key\":\"key_39\",\"type\":\"str\",\"value\":\"v39\"}]"));
    assert_null(strstr(txt, "replaced"));
    g_free(txt);
    ddm_views_free(s);
}

/* A table of ~100 kB of strings (the "vms" view of 1,000 VMs) is sealed
 * into one block of exactly its strings: its doubling blocks ended in a
 * mostly empty 64 KiB one. Past some 512 kB the waste is below an eighth
 * and the blocks stay. */
static void test_views_big_table_strings_compacted(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *v = ddm_views_create(s, "p", NULL, "t", DDM_VIEW_TABLE, NULL);
    static const ddm_column cols[] = {{"key", DDM_VAL_STR, NULL}};
    (void)state;

    assert_int_equal(ddm_view_set_columns(v, cols, 1), 0);
    for (int rows = 1000; rows <= 8000; rows *= 8) {
        gsize want = 0;
        assert_int_equal(ddm_view_begin(v), 0);
        for (int r = 0; r < rows; r++) {
            char str[128];
            g_snprintf(str, sizeof str, "adb:emulator-5554:%d com.example.app%d threads: 14, heap: 12%% of 8.0 MiB, alloc: off, wait", r, r);
            want += strlen(str) + 1;
            assert_int_equal(ddm_view_row(v), 0);
            assert_int_equal(ddm_view_cell_str(v, str), 0);
        }
        assert_int_equal(ddm_view_commit(v), 0);
        assert_int_equal(v->committed->string_bytes, want);
        if (rows == 1000)
            assert_int_equal(ddm_views_content_string_blocks(v->committed), 1);
        else /* ~700 kB: some 64 KiB blocks, the newest less than an eighth empty */
            assert_true(ddm_views_content_string_blocks(v->committed) > 1);
        assert_string_equal(ddm_view_row_str(v, (guint)rows - 1, 0) + strlen("adb:emulator-5554:"),
                            rows == 1000 ? "999 com.example.app999 threads: 14, heap: 12% of 8.0 MiB, alloc: off, wait"
                                         : "7999 com.example.app7999 threads: 14, heap: 12% of 8.0 MiB, alloc: off, wait");
    }
    ddm_views_free(s);
}

/* A string cell equal to the one above it shares it (built or copied
 * with ddm_view_copy_rows), also once compacted: a column that repeats
 * from row to row costs one copy a run. */
static void test_views_repeated_strings_shared(void **state)
{
    DdmViews *s = ddm_views_new();
    ddm_view *v = ddm_views_create(s, "p", NULL, "t", DDM_VIEW_TABLE, NULL);
    static const ddm_column cols[] = {{"name", DDM_VAL_STR, NULL}, {"state", DDM_VAL_STR, NULL}, {"n", DDM_VAL_INT, NULL}};
    gsize want = 0;
    JsonNode *n;
    JsonArray *rows;
    (void)state;

    assert_int_equal(ddm_view_set_columns(v, cols, 3), 0);
    for (int pass = 0; pass < 2; pass++) {
        assert_int_equal(ddm_view_begin(v), 0);
        if (pass == 0) {
            for (int r = 0; r < 200; r++) {
                char name[16];
                const char *st = r == 100 ? NULL : r >= 50 && r < 60 ? "wait" : "running";
                g_snprintf(name, sizeof name, "t%d", r);
                want += strlen(name) + 1;
                assert_int_equal(ddm_view_row(v), 0);
                assert_int_equal(ddm_view_cell_str(v, name), 0);
                assert_int_equal(ddm_view_cell_str(v, st), 0);
                assert_int_equal(ddm_view_cell_int(v, r), 0);
            }
        } else {
            assert_int_equal(ddm_view_copy_rows(v, 0, 200), 0);
        }
        assert_int_equal(ddm_view_commit(v), 0);
        /* runs of "running": 0-49, 60-99, 101-199; of "wait": 50-59 */
        assert_int_equal(v->committed->string_bytes, want + 3 * (strlen("running") + 1) + strlen("wait") + 1);
        assert_int_equal(ddm_views_content_string_blocks(v->committed), 1);
        assert_ptr_equal(ddm_view_row_str(v, 0, 1), ddm_view_row_str(v, 49, 1));
        assert_ptr_not_equal(ddm_view_row_str(v, 49, 1), ddm_view_row_str(v, 60, 1));
        assert_ptr_equal(ddm_view_row_str(v, 60, 1), ddm_view_row_str(v, 99, 1));
        assert_null(ddm_view_row_str(v, 100, 1));
        n = ddm_view_to_json(v, FALSE);
        rows = json_object_get_array_member(json_node_get_object(n), "rows");
        for (guint r = 0; r < 200; r++) {
            JsonArray *row = json_array_get_array_element(rows, r);
            if (r == 100)
                assert_true(JSON_NODE_HOLDS_NULL(json_array_get_element(row, 1)));
            else
                assert_string_equal(json_array_get_string_element(row, 1), r >= 50 && r < 60 ? "wait" : "running");
            assert_int_equal(json_array_get_int_element(row, 2), r);
        }
        json_node_unref(n);
    }
    ddm_views_free(s);
}

/* Empty tables committed with the same columns share one content, which
 * reads exactly as an own one would; a commit with rows gets its own and
 * leaves the others alone; an empty record or blob shares the never-
 * committed content. Every content is freed with its last view (ASan). */
static void test_views_empty_contents_shared(void **state)
{
    DdmViews *s = ddm_views_new();
    static const ddm_column cols[] = {{"id", DDM_VAL_INT, NULL}, {"name", DDM_VAL_STR, "B"}};
    ddm_view *v[3], *rec, *blob, *other;
    char *before, *after;
    (void)state;

    for (int i = 0; i < 3; i++) {
        char vm[16];
        g_snprintf(vm, sizeof vm, "vm%d", i);
        v[i] = ddm_views_create(s, "p", vm, "t", DDM_VIEW_TABLE, "T");
        assert_int_equal(ddm_view_set_columns(v[i], cols, 2), 0);
        assert_int_equal(ddm_view_begin(v[i]), 0);
        assert_int_equal(ddm_view_commit(v[i]), 0);
        assert_int_equal(ddm_view_version(v[i]), 2);
    }
    assert_ptr_equal(v[0]->committed, v[1]->committed);
    assert_ptr_equal(v[1]->committed, v[2]->committed);
    /* the same view of every VM shares one description (owner, name, title, kind) */
    assert_ptr_equal(v[0]->desc, v[2]->desc);
    rec = ddm_views_create(s, "p", "vm0", "t2", DDM_VIEW_TABLE, "T");
    blob = ddm_views_create(s, "p", "vm9", "t", DDM_VIEW_TABLE, "T\xff");
    assert_ptr_not_equal(rec->desc, v[0]->desc);
    assert_ptr_not_equal(blob->desc, v[0]->desc);
    assert_string_equal(ddm_view_title(blob), "T\xef\xbf\xbd"); /* made valid */
    ddm_views_destroy(s, blob);
    assert_null(ddm_views_create(s, "q", "vm1", "t", DDM_VIEW_RECORD, "T")); /* name taken */
    ddm_views_destroy(s, rec);
    /* the first set_columns publishes an empty table: shared too */
    other = ddm_views_create(s, "p", "vm3", "t", DDM_VIEW_TABLE, "T");
    assert_int_equal(ddm_view_set_columns(other, cols, 2), 0);
    assert_ptr_equal(other->committed, v[0]->committed);
    before = json_text_sans_vm(v[0]);
    assert_string_equal(before, "{\"name\":\"t\",\"owner\":\"p\",\"title\":\"T\",\"kind\":\"table\","
                                "\"version\":2,\"columns\":[{\"name\":\"id\",\"type\":\"int\",\"unit\":null},"
                                "{\"name\":\"name\",\"type\":\"str\",\"unit\":\"B\"}],\"rows\":[]}");

    assert_int_equal(ddm_view_begin(v[1]), 0);
    assert_int_equal(ddm_view_row(v[1]), 0);
    assert_int_equal(ddm_view_cell_int(v[1], 7), 0);
    assert_int_equal(ddm_view_cell_str(v[1], "seven"), 0);
    assert_int_equal(ddm_view_commit(v[1]), 0);
    assert_ptr_not_equal(v[1]->committed, v[0]->committed);
    assert_int_equal(rows_of(v[1]), 1);
    assert_int_equal(rows_of(v[0]), 0);
    assert_int_equal(rows_of(v[2]), 0);
    after = json_text_sans_vm(v[2]);
    assert_string_equal(after, before);
    g_free(after);
    /* emptied again: back on the shared one */
    assert_int_equal(ddm_view_begin(v[1]), 0);
    assert_int_equal(ddm_view_commit(v[1]), 0);
    assert_ptr_equal(v[1]->committed, v[0]->committed);
    assert_int_equal(rows_of(v[1]), 0);

    rec = ddm_views_create(s, "p", "vm0", "r", DDM_VIEW_RECORD, NULL);
    assert_int_equal(ddm_view_begin(rec), 0);
    assert_int_equal(ddm_view_commit(rec), 0);
    assert_ptr_equal(rec->committed, ddm_views_content_empty());
    assert_int_equal(ddm_view_version(rec), 1);
    blob = ddm_views_create(s, "p", "vm0", "b", DDM_VIEW_BLOB, NULL);
    assert_int_equal(ddm_view_begin(blob), 0);
    assert_int_equal(ddm_view_blob(blob, "text/plain", NULL, 0), 0);
    assert_int_equal(ddm_view_commit(blob), 0);
    assert_ptr_not_equal(blob->committed, ddm_views_content_empty()); /* it has a media type */

    /* the shared content outlives any one of its views, and goes with the last */
    ddm_views_destroy(s, v[0]);
    after = json_text_sans_vm(v[2]);
    assert_string_equal(after, before);
    g_free(after);
    ddm_views_destroy(s, v[2]);
    ddm_views_destroy(s, other);
    ddm_views_destroy(s, v[1]);
    /* made again after all went: a fresh shared content, the same JSON */
    v[0] = ddm_views_create(s, "p", "vm0", "t", DDM_VIEW_TABLE, "T");
    assert_int_equal(ddm_view_set_columns(v[0], cols, 2), 0);
    assert_int_equal(ddm_view_begin(v[0]), 0);
    assert_int_equal(ddm_view_commit(v[0]), 0);
    after = json_text_sans_vm(v[0]);
    assert_string_equal(after, before);
    g_free(after);
    g_free(before);
    /* lookups by (name, VM) without a key string: global and per-VM apart */
    assert_ptr_equal(ddm_views_lookup(s, "t", "vm0"), v[0]);
    assert_null(ddm_views_lookup(s, "t", NULL));
    assert_null(ddm_views_lookup(s, "t", "vm1"));
    other = ddm_views_create(s, "p", NULL, "t", DDM_VIEW_TABLE, NULL);
    assert_non_null(other);
    assert_ptr_equal(ddm_views_lookup(s, "t", NULL), other);
    assert_ptr_equal(ddm_views_lookup(s, "t", "vm0"), v[0]);
    assert_null(ddm_views_create(s, "p", NULL, "t", DDM_VIEW_TABLE, NULL));
    ddm_views_free(s);
}

/* ---------------------------------------------- views made on demand */

typedef struct MakerLog {
    guint calls;
    char *last_name, *last_key; /* "*" for NULL */
    guint nested_lookups;
} MakerLog;

/* A maker that knows one declared view: "lazy" of VMs "k1" and "k2". */
static void test_maker(DdmViews *store, const char *name, const char *vm_key, gpointer ud)
{
    MakerLog *log = ud;
    const char *keys[] = {"k1", "k2"};
    log->calls++;
    g_free(log->last_name);
    g_free(log->last_key);
    log->last_name = g_strdup(name ? name : "*");
    log->last_key = g_strdup(vm_key ? vm_key : "*");
    /* a lookup from inside does not call the maker again */
    if (!ddm_views_lookup(store, "nothing", "k1"))
        log->nested_lookups++;
    if (name && strcmp(name, "lazy") != 0)
        return;
    for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
        if (vm_key && strcmp(vm_key, keys[i]) != 0)
            continue;
        if (ddm_views_lookup_made(store, "lazy", keys[i]))
            continue;
        ddm_view *v = ddm_views_create(store, "p", keys[i], "lazy", DDM_VIEW_RECORD, "Lazy");
        assert_non_null(v);
        assert_int_equal(ddm_view_begin(v), 0);
        assert_int_equal(ddm_view_field_int(v, "n", 7), 0);
        assert_int_equal(ddm_view_commit(v), 0);
    }
}

/* The test maker's namer: "lazy" of k1 and k2 (NULL: any VM). */
static void test_namer(DdmViews *store, const char *vm_key, GHashTable *names, gpointer ud)
{
    MakerLog *log = ud;
    (void)store;
    log->calls += 100; /* counted apart from the maker's calls */
    if (!vm_key || strcmp(vm_key, "k1") == 0 || strcmp(vm_key, "k2") == 0)
        g_hash_table_add(names, g_strdup("lazy"));
}

typedef struct UnwatchLog {
    guint calls;
    char *name, *key; /* "*" for NULL */
    int matching;     /* watches still counting "lazy" of k1 when called */
} UnwatchLog;

static void test_unwatched(DdmViews *store, const char *name, const char *vm_key, gpointer ud)
{
    UnwatchLog *log = ud;
    log->calls++;
    g_free(log->name);
    g_free(log->key);
    log->name = g_strdup(name ? name : "*");
    log->key = g_strdup(vm_key ? vm_key : "*");
    log->matching = ddm_views_watches_matching(store, "lazy", "k1");
}

/* The unwatch hook hears each watch that ends, with its name and VM, once
 * the watch no longer counts (the registry's linger starts there). */
static void test_views_unwatched_hook(void **state)
{
    DdmViews *s = ddm_views_new();
    UnwatchLog log = {0};
    (void)state;
    ddm_views_set_unwatched(s, test_unwatched, &log);
    guint w1 = ddm_views_watch(s, "lazy", "k1");
    guint w2 = ddm_views_watch(s, NULL, NULL);
    assert_int_equal(log.calls, 0);
    ddm_views_unwatch(s, w1);
    assert_int_equal(log.calls, 1);
    assert_string_equal(log.name, "lazy");
    assert_string_equal(log.key, "k1");
    assert_int_equal(log.matching, 1); /* the other watch only */
    ddm_views_unwatch(s, w2);
    assert_int_equal(log.calls, 2);
    assert_string_equal(log.name, "*");
    assert_string_equal(log.key, "*");
    assert_int_equal(log.matching, 0);
    ddm_views_unwatch(s, w2); /* gone already: no call */
    assert_int_equal(log.calls, 2);
    ddm_views_remove_maker(s, &log); /* removes the hook set with that ud */
    ddm_views_unwatch(s, ddm_views_watch(s, "x", NULL));
    assert_int_equal(log.calls, 2);
    g_free(log.name);
    g_free(log.key);
    ddm_views_free(s);
}

/* A listing of one VM makes that VM's declared views only (ddmon views
 * --vm K, the TUI's detail screen every 3 s, GET /api/vms/KEY), and the
 * names of the views there are ("unknown view" messages) make none. */
static void test_views_list_vm(void **state)
{
    DdmViews *s = ddm_views_new();
    MakerLog log = {0};
    (void)state;

    ddm_views_set_maker(s, test_maker, &log);
    ddm_views_set_namer(s, test_namer, &log);
    ddm_view *g = ddm_views_create(s, "core", NULL, "vms", DDM_VIEW_TABLE, "VMs");
    assert_non_null(g);
    ddm_view *o = ddm_views_create(s, "p", "k2", "other", DDM_VIEW_RECORD, "Other");
    assert_non_null(o);

    /* names: made or declared, none made; the namer asked once */
    g_autoptr(GHashTable) n1 = ddm_views_names(s, "k1");
    assert_int_equal(g_hash_table_size(n1), 1);
    assert_true(g_hash_table_contains(n1, "lazy"));
    g_autoptr(GHashTable) n2 = ddm_views_names(s, "k2");
    assert_int_equal(g_hash_table_size(n2), 2);
    assert_true(g_hash_table_contains(n2, "other"));
    g_autoptr(GHashTable) any = ddm_views_names(s, NULL);
    assert_int_equal(g_hash_table_size(any), 3); /* vms, other, lazy */
    assert_int_equal(log.calls, 300);
    assert_null(ddm_views_lookup_made(s, "lazy", "k1"));
    assert_null(ddm_views_lookup_made(s, "lazy", "k2"));

    /* one VM's list: its declared views made, the other VM's not */
    g_autoptr(GPtrArray) l1 = ddm_views_list_vm(s, "k1");
    assert_int_equal(log.calls, 301);
    assert_string_equal(log.last_key, "k1");
    assert_string_equal(log.last_name, "*");
    assert_int_equal(l1->len, 1);
    assert_string_equal(ddm_view_name(g_ptr_array_index(l1, 0)), "lazy");
    assert_string_equal(ddm_view_vm_key(g_ptr_array_index(l1, 0)), "k1");
    assert_null(ddm_views_lookup_made(s, "lazy", "k2"));
    g_autoptr(GPtrArray) l2 = ddm_views_list_vm(s, "k2");
    assert_int_equal(l2->len, 2);
    assert_string_equal(ddm_view_name(g_ptr_array_index(l2, 0)), "lazy"); /* by name */
    assert_string_equal(ddm_view_name(g_ptr_array_index(l2, 1)), "other");
    /* the global views: no maker asked */
    guint before = log.calls;
    g_autoptr(GPtrArray) lg = ddm_views_list_vm(s, NULL);
    assert_int_equal(log.calls, before);
    assert_int_equal(lg->len, 1);
    assert_ptr_equal(g_ptr_array_index(lg, 0), g);
    /* removing the maker removes its namer */
    ddm_views_remove_maker(s, &log);
    g_autoptr(GHashTable) n3 = ddm_views_names(s, "k3");
    assert_int_equal(g_hash_table_size(n3), 0);
    assert_int_equal(log.calls, before);
    g_free(log.last_name);
    g_free(log.last_key);
    ddm_views_free(s);
}

static void test_views_maker(void **state)
{
    DdmViews *s = ddm_views_new();
    MakerLog log = {0};
    ddm_view *v;
    (void)state;

    ddm_views_set_maker(s, test_maker, &log);
    /* global names are never declared: no call */
    assert_null(ddm_views_lookup(s, "vms", NULL));
    assert_int_equal(log.calls, 0);
    /* a VM's view not made: the maker is asked for that one, and it is there */
    v = ddm_views_lookup(s, "lazy", "k1");
    assert_non_null(v);
    assert_int_equal(log.calls, 1);
    assert_string_equal(log.last_name, "lazy");
    assert_string_equal(log.last_key, "k1");
    assert_int_equal(log.nested_lookups, 1);
    assert_int_equal(ddm_view_version(v), 1);
    assert_null(ddm_views_lookup_made(s, "lazy", "k2"));
    /* made: not asked again */
    assert_ptr_equal(ddm_views_lookup(s, "lazy", "k1"), v);
    assert_int_equal(log.calls, 1);
    /* an undeclared name of a VM: asked, nothing made */
    assert_null(ddm_views_lookup(s, "other", "k1"));
    assert_int_equal(log.calls, 2);
    /* listing what exists asks nothing; listing asks for every view */
    g_autoptr(GPtrArray) made = ddm_views_list_made(s);
    assert_int_equal(made->len, 1);
    assert_int_equal(log.calls, 2);
    g_autoptr(GPtrArray) all = ddm_views_list(s);
    assert_int_equal(log.calls, 3);
    assert_string_equal(log.last_name, "*");
    assert_string_equal(log.last_key, "*");
    assert_int_equal(all->len, 2);
    ddm_views_destroy(s, ddm_views_lookup(s, "lazy", "k2"));
    g_autoptr(GPtrArray) named = ddm_views_list_named(s, "lazy");
    assert_string_equal(log.last_name, "lazy");
    assert_string_equal(log.last_key, "*");
    assert_int_equal(named->len, 2); /* made again */
    /* a watch: the views it counts exist before it counts them */
    ddm_views_destroy(s, ddm_views_lookup_made(s, "lazy", "k2"));
    assert_int_equal(ddm_views_watches_matching(s, "lazy", "k2"), 0);
    guint w = ddm_views_watch(s, "lazy", "k2");
    assert_string_equal(log.last_key, "k2");
    v = ddm_views_lookup_made(s, "lazy", "k2");
    assert_non_null(v);
    assert_int_equal(ddm_view_watchers(v), 1);
    assert_int_equal(ddm_views_watches_matching(s, "lazy", "k2"), 1);
    assert_int_equal(ddm_views_watches_matching(s, "lazy", "k1"), 0);
    assert_int_equal(ddm_views_watches_matching(s, "other", "k2"), 0);
    ddm_views_unwatch(s, w);
    /* a create of a declared name does not ask the maker (no double view) */
    guint before = log.calls;
    ddm_views_destroy(s, ddm_views_lookup_made(s, "lazy", "k2"));
    v = ddm_views_create(s, "p", "k2", "lazy", DDM_VIEW_TABLE, "Lazy");
    assert_non_null(v);
    assert_int_equal(log.calls, before);
    /* no maker: plain lookups */
    ddm_views_set_maker(s, NULL, NULL);
    ddm_views_destroy(s, v);
    assert_null(ddm_views_lookup(s, "lazy", "k2"));
    assert_int_equal(log.calls, before);
    g_free(log.last_name);
    g_free(log.last_key);
    ddm_views_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_maker),
        cmocka_unit_test(test_views_list_vm),
        cmocka_unit_test(test_views_unwatched_hook),
        cmocka_unit_test(test_views_create_lookup),
        cmocka_unit_test(test_views_begin_commit_visibility),
        cmocka_unit_test(test_views_cell_errors),
        cmocka_unit_test(test_views_record),
        cmocka_unit_test(test_views_record_many_fields),
        cmocka_unit_test(test_views_colliding_keys),
        cmocka_unit_test(test_views_columns_interned),
        cmocka_unit_test(test_views_list_named),
        cmocka_unit_test(test_views_columns_remembered),
        cmocka_unit_test(test_views_blob),
        cmocka_unit_test(test_views_caps),
        cmocka_unit_test(test_views_listeners),
        cmocka_unit_test(test_views_listener_changes_during_notify),
        cmocka_unit_test(test_views_watches),
        cmocka_unit_test(test_views_destroy_vm_owner),
        cmocka_unit_test(test_views_destroy_vm_by_description),
        cmocka_unit_test(test_views_destroy_reentrant),
        cmocka_unit_test(test_views_detached),
        cmocka_unit_test(test_views_json_shape),
        cmocka_unit_test(test_views_commit_warns_once),
        cmocka_unit_test(test_views_rebuild_cost),
        cmocka_unit_test(test_views_destroyed_while_added),
        cmocka_unit_test(test_views_bad_strings),
        cmocka_unit_test(test_views_interest),
        cmocka_unit_test(test_views_empty_contents_shared),
        cmocka_unit_test(test_views_cells_compact),
        cmocka_unit_test(test_views_record_strings_compacted),
        cmocka_unit_test(test_views_big_table_strings_compacted),
        cmocka_unit_test(test_views_repeated_strings_shared),
    };
    return cmocka_run_group_tests_name("views", tests, group_setup, NULL);
}
