/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the "vms" view's kept rows (core/daemon/vms_rows.c): a
 * row inserted, updated or removed, and a long random sequence of such
 * changes, publish exactly what a full rebuild gives (the reference: every
 * current row built into a second view by hand, groups then keys in
 * strcmp order), compared as the JSON document and as the rendered text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/daemon/vms_rows.h"
#include "core/views/views.h"

static const ddm_column cols[] = {
    {"key", DDM_VAL_STR, NULL},
    {"pid", DDM_VAL_INT, NULL},
    {"app", DDM_VAL_STR, NULL},
    {"ddm", DDM_VAL_BOOL, NULL},
    {"info", DDM_VAL_STR, NULL},
};
#define NCOLS G_N_ELEMENTS(cols)

/* One reference row: what the cells should be. */
typedef struct Ref {
    guint group;
    char *key;
    gint64 pid;   /* 0 = null */
    char *app;    /* NULL = null */
    int ddm;      /* -1 = null */
    char *info;
} Ref;

static void ref_free(gpointer p)
{
    Ref *r = p;
    g_free(r->key);
    g_free(r->app);
    g_free(r->info);
    g_free(r);
}

static gint ref_cmp(gconstpointer a, gconstpointer b)
{
    const Ref *x = *(Ref *const *)a, *y = *(Ref *const *)b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return strcmp(x->key, y->key);
}

static void fill_row(DdmVmsRow *row, const Ref *r)
{
    ddm_vms_row_str(row, r->key);
    if (r->pid)
        ddm_vms_row_int(row, r->pid);
    else
        ddm_vms_row_str(row, NULL);
    ddm_vms_row_str(row, r->app);
    if (r->ddm >= 0)
        ddm_vms_row_bool(row, r->ddm);
    else
        ddm_vms_row_str(row, NULL);
    ddm_vms_row_str(row, r->info);
}

/* The reference: a full rebuild of @refs into @view. */
static void rebuild_reference(ddm_view *view, GPtrArray *refs)
{
    g_ptr_array_sort(refs, ref_cmp);
    assert_int_equal(ddm_view_begin(view), 0);
    for (guint i = 0; i < refs->len; i++) {
        const Ref *r = refs->pdata[i];
        assert_int_equal(ddm_view_row(view), 0);
        assert_int_equal(ddm_view_cell_str(view, r->key), 0);
        if (r->pid)
            assert_int_equal(ddm_view_cell_int(view, r->pid), 0);
        else
            assert_int_equal(ddm_view_cell_str(view, NULL), 0);
        assert_int_equal(ddm_view_cell_str(view, r->app), 0);
        if (r->ddm >= 0)
            assert_int_equal(ddm_view_cell_bool(view, r->ddm), 0);
        else
            assert_int_equal(ddm_view_cell_str(view, NULL), 0);
        assert_int_equal(ddm_view_cell_str(view, r->info), 0);
    }
    assert_int_equal(ddm_view_commit(view), 0);
}

/* JSON text of @v without its name (the two views differ only there). */
static char *json_of(ddm_view *v)
{
    JsonNode *n = ddm_view_to_json(v, FALSE);
    JsonObject *o = json_node_get_object(n);
    json_object_remove_member(o, "name");
    char *s = json_to_string(n, FALSE);
    json_node_unref(n);
    return s;
}

static char *text_of(ddm_view *v)
{
    JsonNode *n = ddm_view_to_json(v, FALSE);
    JsonObject *o = json_node_get_object(n);
    json_object_set_string_member(o, "name", "vms");
    char *s = ddm_view_json_to_text(n);
    json_node_unref(n);
    return s;
}

typedef struct Fixture {
    DdmViews *store;
    ddm_view *inc, *ref;
    DdmVmsRows *rows;
    GPtrArray *refs; /* Ref* */
} Fixture;

static int setup(void **state)
{
    Fixture *f = g_new0(Fixture, 1);
    f->store = ddm_views_new();
    f->inc = ddm_views_create(f->store, "ddmon", NULL, "vms", DDM_VIEW_TABLE, "Virtual machines");
    f->ref = ddm_views_create(f->store, "ddmon", NULL, "vms-ref", DDM_VIEW_TABLE, "Virtual machines");
    assert_int_equal(ddm_view_set_columns(f->inc, cols, NCOLS), 0);
    assert_int_equal(ddm_view_set_columns(f->ref, cols, NCOLS), 0);
    f->rows = ddm_vms_rows_new(NCOLS);
    f->refs = g_ptr_array_new_with_free_func(ref_free);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    ddm_vms_rows_free(f->rows);
    g_ptr_array_unref(f->refs);
    ddm_views_free(f->store);
    g_free(f);
    return 0;
}

static Ref *find_ref(Fixture *f, guint group, const char *key, guint *index)
{
    for (guint i = 0; i < f->refs->len; i++) {
        Ref *r = f->refs->pdata[i];
        if (r->group == group && strcmp(r->key, key) == 0) {
            if (index)
                *index = i;
            return r;
        }
    }
    return NULL;
}

static void set_row(Fixture *f, guint group, const char *key, gint64 pid, const char *app, int ddm,
                    const char *info)
{
    Ref *r = find_ref(f, group, key, NULL);
    if (!r) {
        r = g_new0(Ref, 1);
        r->group = group;
        r->key = g_strdup(key);
        g_ptr_array_add(f->refs, r);
    }
    g_free(r->app);
    g_free(r->info);
    r->pid = pid;
    r->app = g_strdup(app);
    r->ddm = ddm;
    r->info = g_strdup(info);
    fill_row(ddm_vms_rows_set(f->rows, group, key), r);
}

static void remove_row(Fixture *f, guint group, const char *key)
{
    guint i;
    gboolean had = find_ref(f, group, key, &i) != NULL;
    if (had)
        g_ptr_array_remove_index(f->refs, i);
    assert_int_equal(ddm_vms_rows_remove(f->rows, group, key), had);
}

/* Publish both ways and compare. */
static void check_same(Fixture *f)
{
    assert_int_equal(ddm_vms_rows_publish(f->rows, f->inc), 0);
    rebuild_reference(f->ref, f->refs);
    assert_int_equal(ddm_vms_rows_count(f->rows), f->refs->len);
    g_autofree char *a = json_of(f->inc), *b = json_of(f->ref);
    assert_string_equal(a, b);
    g_autofree char *ta = text_of(f->inc), *tb = text_of(f->ref);
    assert_string_equal(ta, tb);
}

static void test_insert_update_remove(void **state)
{
    Fixture *f = *state;
    check_same(f); /* empty */
    set_row(f, 1, "127.0.0.1:8001", 101, "com.example.b", 1, "threads: 3");
    check_same(f);
    set_row(f, 1, "127.0.0.1:8000", 100, "com.example.a", 1, NULL); /* before the first */
    set_row(f, 0, "adb:x:9", 9, NULL, -1, "connection refused");   /* a retrying row first */
    check_same(f);
    set_row(f, 1, "127.0.0.1:8001", 101, "com.example.b2", 0, "threads: 4"); /* an update */
    check_same(f);
    remove_row(f, 1, "127.0.0.1:8000");
    remove_row(f, 1, "no-such-key");
    check_same(f);
    remove_row(f, 0, "adb:x:9");
    set_row(f, 1, "adb:x:9", 9, "com.example.c", 1, NULL); /* the same key, now a VM */
    check_same(f);
    ddm_vms_rows_clear(f->rows);
    g_ptr_array_set_size(f->refs, 0);
    check_same(f);
}

/* A row given fewer cells than columns gets nulls; more are dropped. */
static void test_short_and_long_rows(void **state)
{
    Fixture *f = *state;
    DdmVmsRow *row = ddm_vms_rows_set(f->rows, 1, "k1");
    ddm_vms_row_str(row, "k1");
    ddm_vms_row_int(row, 5);
    Ref *r = g_new0(Ref, 1);
    r->group = 1;
    r->key = g_strdup("k1");
    r->pid = 5;
    r->ddm = -1;
    g_ptr_array_add(f->refs, r);
    check_same(f);
    row = ddm_vms_rows_set(f->rows, 1, "k1");
    fill_row(row, r);
    ddm_vms_row_str(row, "one too many");
    check_same(f);
}

/* Random inserts, updates and removes against a full rebuild each time. */
static void test_random_against_full_rebuild(void **state)
{
    Fixture *f = *state;
    GRand *rnd = g_rand_new_with_seed(1616);
    static const char *const apps[] = {NULL, "com.a", "com.b", "<pre-initialized>", "é日本"};
    static const char *const infos[] = {NULL, "", "heap: 67% of 8.0 MiB", "alloc: off, threads: 14"};
    for (int step = 0; step < 3000; step++) {
        char key[32];
        guint group = (guint)g_rand_int_range(rnd, 0, 2);
        g_snprintf(key, sizeof key, "%s:%d", g_rand_boolean(rnd) ? "127.0.0.1" : "adb:emu",
                   g_rand_int_range(rnd, 0, 60));
        if (g_rand_int_range(rnd, 0, 3) == 0) {
            remove_row(f, group, key);
        } else {
            /* a key is listed one way at most, as the monitor does */
            remove_row(f, 1 - group, key);
            set_row(f, group, key, g_rand_int_range(rnd, 0, 3) ? g_rand_int_range(rnd, 1, 99999) : 0,
                    apps[g_rand_int_range(rnd, 0, G_N_ELEMENTS(apps))],
                    g_rand_int_range(rnd, -1, 2),
                    infos[g_rand_int_range(rnd, 0, G_N_ELEMENTS(infos))]);
        }
        if (step % 7 == 0 || step > 2900)
            check_same(f);
    }
    check_same(f);
    g_rand_free(rnd);
}

/* Integers are kept in 32 bits when they fit and in the row's text when
 * they do not (vms_rows.c): the edges of both and the widest values come
 * out as given, beside strings in the same text. */
static void test_wide_integers(void **state)
{
    Fixture *f = *state;
    static const gint64 pids[] = {G_MAXINT32, (gint64)G_MAXINT32 + 1, G_MAXUINT32, G_MININT32,
                                  (gint64)G_MININT32 - 1, G_MAXINT64, G_MININT64, 1};
    for (guint i = 0; i < G_N_ELEMENTS(pids); i++) {
        char key[16];
        g_snprintf(key, sizeof key, "k%u", i);
        set_row(f, 1, key, pids[i], i % 2 ? "com.example.wide" : NULL, 1, i % 3 ? "info" : NULL);
    }
    check_same(f);
    set_row(f, 1, "k1", 7, "com.example.narrow", 0, NULL); /* a wide value replaced by a narrow one */
    set_row(f, 1, "k7", G_MAXINT64 - 1, "com.example.wider", 0, "x");
    check_same(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_insert_update_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_and_long_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_against_full_rebuild, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wide_integers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
