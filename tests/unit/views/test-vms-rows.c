/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the "vms" view's rows kept in the view (core/daemon/
 * vms_rows.c, and the builder it copies rows with, ddm_view_copy_rows): a
 * row inserted, updated or removed, and a long random sequence of such
 * changes, publish exactly what a full rebuild gives (the reference: every
 * current row built into a second view by hand, groups then keys in
 * strcmp order), compared as the JSON document and as the rendered text,
 * while only the changed rows are written again; a view committed by
 * someone else in between is rebuilt whole; a key whose row the writer
 * finds gone makes none and is not counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
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

/* One row of @r into @view's content being built. */
static void write_ref(ddm_view *view, const Ref *r)
{
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

/* The reference: a full rebuild of @refs into @view. */
static void rebuild_reference(ddm_view *view, GPtrArray *refs)
{
    g_ptr_array_sort(refs, ref_cmp);
    assert_int_equal(ddm_view_begin(view), 0);
    for (guint i = 0; i < refs->len; i++)
        write_ref(view, refs->pdata[i]);
    assert_int_equal(ddm_view_commit(view), 0);
}

/* JSON text of @v without its name and version (the two views differ
 * only there: a test may commit one of them more often). */
static char *json_of(ddm_view *v)
{
    JsonNode *n = ddm_view_to_json(v, FALSE);
    JsonObject *o = json_node_get_object(n);
    json_object_remove_member(o, "name");
    json_object_remove_member(o, "version");
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
    GPtrArray *refs;    /* Ref* */
    GHashTable *dirty;  /* keys (owned) changed since the last publication, as vms_view.c keeps them */
    gboolean all_dirty; /* the next publication rebuilds every row */
    DdmVmsRowsKept kept;
    guint written;      /* rows the last publication wrote (the others were copied) */
    guint kept_publications; /* publications that kept rows */
    const char *vanished; /* a key the next publication lists, whose row the writer finds gone */
    guint vanished_group;
} Fixture;

static int setup(void **state)
{
    Fixture *f = g_new0(Fixture, 1);
    f->store = ddm_views_new();
    f->inc = ddm_views_create(f->store, "ddmon", NULL, "vms", DDM_VIEW_TABLE, "Virtual machines");
    f->ref = ddm_views_create(f->store, "ddmon", NULL, "vms-ref", DDM_VIEW_TABLE, "Virtual machines");
    assert_int_equal(ddm_view_set_columns(f->inc, cols, NCOLS), 0);
    assert_int_equal(ddm_view_set_columns(f->ref, cols, NCOLS), 0);
    f->refs = g_ptr_array_new_with_free_func(ref_free);
    f->dirty = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    g_ptr_array_unref(f->refs);
    g_hash_table_destroy(f->dirty);
    ddm_views_free(f->store);
    g_free(f);
    return 0;
}

/* The Ref of @key in @group (G_MAXUINT: in any group). */
static Ref *find_ref(Fixture *f, guint group, const char *key, guint *index)
{
    for (guint i = 0; i < f->refs->len; i++) {
        Ref *r = f->refs->pdata[i];
        if ((group == G_MAXUINT || r->group == group) && strcmp(r->key, key) == 0) {
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
    g_hash_table_add(f->dirty, g_strdup(key));
}

static void remove_row(Fixture *f, guint group, const char *key)
{
    guint i;
    if (find_ref(f, group, key, &i))
        g_ptr_array_remove_index(f->refs, i);
    g_hash_table_add(f->dirty, g_strdup(key));
}

static gboolean write_row(ddm_view *view, guint group, const char *key, gpointer ud)
{
    Fixture *f = ud;
    const Ref *r = find_ref(f, group, key, NULL);
    f->written++;
    if (!r) { /* gone since the plan, as a VM vms_view.c no longer finds: no row */
        assert_string_equal(key, f->vanished);
        return FALSE;
    }
    write_ref(view, r);
    return TRUE;
}

/* Publish as vms_view.c does: the rows of the dirty keys written again
 * (in the group their Ref is now in, if any), or every row. */
static void publish(Fixture *f)
{
    DdmVmsRowsPlan plan = {.write = {g_ptr_array_new(), g_ptr_array_new()}};
    GHashTableIter it;
    gpointer key;

    plan.keep = !f->all_dirty && ddm_vms_rows_still_kept(&f->kept, f->inc);
    if (plan.keep) {
        plan.replaced = f->dirty;
        g_hash_table_iter_init(&it, f->dirty);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
            const Ref *r = find_ref(f, G_MAXUINT, key, NULL);
            if (r)
                g_ptr_array_add(plan.write[r->group], r->key);
        }
        f->kept_publications++;
    } else {
        for (guint i = 0; i < f->refs->len; i++) {
            const Ref *r = f->refs->pdata[i];
            g_ptr_array_add(plan.write[r->group], r->key);
        }
    }
    if (f->vanished)
        g_ptr_array_add(plan.write[f->vanished_group], (gpointer)f->vanished);
    guint to_write = plan.write[0]->len + plan.write[1]->len;
    f->written = 0;
    assert_int_equal(ddm_vms_rows_publish(f->inc, &plan, write_row, f, &f->kept), 0);
    assert_int_equal(f->written, to_write); /* only those: the others were copied */
    assert_true(ddm_vms_rows_still_kept(&f->kept, f->inc));
    f->all_dirty = FALSE;
    g_hash_table_remove_all(f->dirty);
    g_ptr_array_unref(plan.write[0]);
    g_ptr_array_unref(plan.write[1]);
}

/* Publish both ways and compare. */
static void check_same(Fixture *f)
{
    publish(f);
    rebuild_reference(f->ref, f->refs);
    assert_int_equal(ddm_view_n_rows(f->inc), f->refs->len);
    assert_int_equal(f->kept.n_rows, f->refs->len);
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
    assert_true(f->kept_publications >= 5);
    g_ptr_array_set_size(f->refs, 0);
    f->all_dirty = TRUE;
    check_same(f);
}

/* A key the plan lists but whose row the writer finds gone (vms_view.c: a
 * VM no longer found) makes no row and is not counted: the view and what
 * the publication kept agree, and the next publication keeps rows. */
static void test_writer_writes_none(void **state)
{
    Fixture *f = *state;
    set_row(f, 0, "r1", 1, NULL, -1, "refused");
    set_row(f, 0, "r2", 2, NULL, -1, "refused");
    set_row(f, 1, "a", 3, "com.a", 1, NULL);
    set_row(f, 1, "b", 4, "com.b", 1, NULL);
    check_same(f);
    remove_row(f, 0, "r1"); /* in group 0: where group 1 begins depends on it */
    f->vanished = "r1";
    f->vanished_group = 0;
    check_same(f); /* publish checks the rows are still kept */
    assert_int_equal(f->kept.n_group0, 1);
    remove_row(f, 1, "a");
    f->vanished = "a";
    f->vanished_group = 1;
    check_same(f);
    f->vanished = NULL;
    guint kept = f->kept_publications;
    set_row(f, 1, "b", 5, "com.b2", 0, "x");
    check_same(f);
    assert_int_equal(f->kept_publications, kept + 1);
    assert_int_equal(f->written, 1);
}

/* Another commit of the view (its producer's rows no longer there) or
 * rows dropped by hand: the next publication writes every row. */
static void test_view_changed_meanwhile(void **state)
{
    Fixture *f = *state;
    set_row(f, 1, "k1", 1, "com.a", 1, NULL);
    set_row(f, 1, "k2", 2, "com.b", 0, "x");
    set_row(f, 0, "k0", 0, NULL, -1, "refused");
    check_same(f);
    assert_int_equal(f->kept.n_group0, 1);
    /* someone commits other rows */
    assert_int_equal(ddm_view_begin(f->inc), 0);
    write_ref(f->inc, f->refs->pdata[0]);
    assert_int_equal(ddm_view_commit(f->inc), 0);
    assert_false(ddm_vms_rows_still_kept(&f->kept, f->inc));
    set_row(f, 1, "k3", 3, "com.c", 1, NULL);
    check_same(f); /* a full rebuild: every row written (publish checks the count) */
    assert_int_equal(f->written, 4);
    set_row(f, 1, "k1", 11, "com.a2", 1, NULL);
    check_same(f);
    assert_int_equal(f->written, 1);
}

/* ddm_view_copy_rows: rows as they were, nulls included, after the
 * committed content is gone; its refusals. */
static void test_copy_rows(void **state)
{
    Fixture *f = *state;
    static const ddm_column other[] = {{"key", DDM_VAL_STR, NULL}};
    set_row(f, 1, "a", 0, NULL, -1, NULL);
    set_row(f, 1, "b", 7, "com.b", 1, "info b");
    set_row(f, 1, "c", 8, "é日本", 0, "");
    check_same(f);
    g_autofree char *before = json_of(f->inc);
    assert_int_equal(ddm_view_copy_rows(f->inc, 0, 1), -EPROTO); /* no begin */
    assert_int_equal(ddm_view_begin(f->inc), 0);
    assert_int_equal(ddm_view_copy_rows(f->inc, 2, 2), -EINVAL); /* past the end */
    assert_int_equal(ddm_view_copy_rows(f->inc, 4, 0), -EINVAL);
    assert_int_equal(ddm_view_copy_rows(f->inc, 0, 0), 0);
    assert_int_equal(ddm_view_copy_rows(f->inc, 0, 1), 0);
    write_ref(f->inc, f->refs->pdata[1]); /* a row between copies */
    assert_int_equal(ddm_view_copy_rows(f->inc, 1, 2), 0);
    assert_int_equal(ddm_view_commit(f->inc), 0);
    assert_int_equal(ddm_view_n_rows(f->inc), 4);
    assert_string_equal(ddm_view_row_str(f->inc, 1, 0), "b");
    assert_string_equal(ddm_view_row_str(f->inc, 3, 2), "é日本");
    assert_null(ddm_view_row_str(f->inc, 0, 2)); /* a null cell */
    assert_null(ddm_view_row_str(f->inc, 1, 1)); /* an integer column */
    assert_null(ddm_view_row_str(f->inc, 4, 0));
    assert_null(ddm_view_row_str(f->inc, 0, NCOLS));
    /* the same as a by-hand copy of rows a, b, b, c */
    Ref *a = f->refs->pdata[0], *b = f->refs->pdata[1], *c = f->refs->pdata[2];
    assert_int_equal(ddm_view_begin(f->ref), 0);
    write_ref(f->ref, a);
    write_ref(f->ref, b);
    write_ref(f->ref, b);
    write_ref(f->ref, c);
    assert_int_equal(ddm_view_commit(f->ref), 0);
    g_autofree char *ja = json_of(f->inc), *jb = json_of(f->ref);
    assert_string_equal(ja, jb);
    assert_string_not_equal(before, ja);
    /* other columns in the content being built: refused, nothing copied */
    assert_int_equal(ddm_view_begin(f->inc), 0);
    assert_int_equal(ddm_view_set_columns(f->inc, other, 1), 0);
    assert_int_equal(ddm_view_copy_rows(f->inc, 0, 1), -EINVAL);
    assert_int_equal(ddm_view_commit(f->inc), 0);
    assert_int_equal(ddm_view_n_rows(f->inc), 0);
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
    assert_true(f->kept_publications > 400);
    g_rand_free(rnd);
}

/* Integers of every width are copied as they are: the edges of 32 bits
 * and the widest values come out as given. */
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
        cmocka_unit_test_setup_teardown(test_writer_writes_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_changed_meanwhile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_against_full_rebuild, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wide_integers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
