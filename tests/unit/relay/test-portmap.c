/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the relay's remembered debugger ports (core/relay/portmap.c):
 * lookups by device serial + app name, the LRU bound, the file round trip
 * (mode 0600 in a 0700 directory, written by rename), and corrupt or hostile
 * files (bad header, bad ports, control characters, duplicates, too large,
 * a symlink, another mode) taken as nothing with an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/relay/portmap.h"

static void test_portmap_lookup_by_device_and_app(void **state)
{
    (void)state;
    DdmPortMap *m = ddm_portmap_new(8);
    gboolean changed = FALSE;
    assert_true(ddm_portmap_set(m, "emulator-5554", "com.example.a", 8600, &changed));
    assert_true(changed);
    assert_true(ddm_portmap_set(m, NULL, "com.example.a", 8601, NULL)); /* a local VM */
    assert_int_equal(ddm_portmap_lookup(m, "emulator-5554", "com.example.a"), 8600);
    assert_int_equal(ddm_portmap_lookup(m, "", "com.example.a"), 8601);
    assert_int_equal(ddm_portmap_lookup(m, NULL, "com.example.a"), 8601);
    assert_int_equal(ddm_portmap_lookup(m, "emulator-5556", "com.example.a"), 0);
    assert_int_equal(ddm_portmap_lookup(m, "emulator-5554", "com.example.b"), 0);
    /* the same again, most recent already: nothing to write */
    assert_true(ddm_portmap_set(m, NULL, "com.example.a", 8601, &changed));
    assert_false(changed);
    assert_true(ddm_portmap_set(m, NULL, "com.example.a", 8602, &changed));
    assert_true(changed);
    assert_true(ddm_portmap_port_taken_by_other(m, 8600, NULL, "com.example.a"));
    assert_false(ddm_portmap_port_taken_by_other(m, 8600, "emulator-5554", "com.example.a"));
    assert_false(ddm_portmap_port_taken_by_other(m, 8603, NULL, NULL));
    assert_true(ddm_portmap_port_taken_by_other(m, 8602, NULL, NULL));
    /* names the file cannot hold are refused */
    assert_false(ddm_portmap_set(m, NULL, "a\tb", 8610, NULL));
    assert_false(ddm_portmap_set(m, "x\ny", "ok", 8610, NULL));
    assert_false(ddm_portmap_set(m, NULL, "", 8610, NULL));
    assert_false(ddm_portmap_set(m, NULL, "\xff\xfe", 8610, NULL));
    assert_false(ddm_portmap_set(m, NULL, "ok", 0, NULL));
    char longname[DDM_PORTMAP_APP_MAX + 2];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_false(ddm_portmap_set(m, NULL, longname, 8610, NULL));
    assert_int_equal(ddm_portmap_count(m), 2);
    ddm_portmap_free(m);
}

/* One port, one app: the app that takes a port last holds it. */
static void test_portmap_port_has_one_app(void **state)
{
    DdmPortMap *m = ddm_portmap_new(8);
    gboolean changed = FALSE;
    (void)state;
    assert_true(ddm_portmap_set(m, "", "com.a", 8600, NULL));
    assert_true(ddm_portmap_set(m, "", "com.c", 8601, NULL));
    assert_true(ddm_portmap_set(m, "", "com.b", 8600, &changed));
    assert_true(changed);
    assert_int_equal(ddm_portmap_lookup(m, "", "com.b"), 8600);
    assert_int_equal(ddm_portmap_lookup(m, "", "com.a"), 0);
    assert_int_equal(ddm_portmap_lookup(m, "", "com.c"), 8601);
    assert_int_equal(ddm_portmap_count(m), 2);
    ddm_portmap_free(m);
}

static void test_portmap_lru_bound(void **state)
{
    (void)state;
    DdmPortMap *m = ddm_portmap_new(3);
    assert_true(ddm_portmap_set(m, "s", "a", 8600, NULL));
    assert_true(ddm_portmap_set(m, "s", "b", 8601, NULL));
    assert_true(ddm_portmap_set(m, "s", "c", 8602, NULL));
    assert_true(ddm_portmap_set(m, "s", "a", 8600, NULL)); /* a used again: b is the oldest */
    assert_true(ddm_portmap_set(m, "s", "d", 8603, NULL));
    assert_int_equal(ddm_portmap_count(m), 3);
    assert_int_equal(ddm_portmap_lookup(m, "s", "b"), 0);
    assert_int_equal(ddm_portmap_lookup(m, "s", "a"), 8600);
    assert_int_equal(ddm_portmap_lookup(m, "s", "c"), 8602);
    assert_int_equal(ddm_portmap_lookup(m, "s", "d"), 8603);
    /* the file lists them oldest first */
    g_autofree char *text = ddm_portmap_serialize(m, NULL);
    assert_string_equal(text, DDM_PORTMAP_HEADER "\ns\tc\t8602\ns\ta\t8600\ns\td\t8603\n");
    ddm_portmap_free(m);

    /* the real bound */
    m = ddm_portmap_new(DDM_PORTMAP_MAX_ENTRIES);
    for (guint i = 0; i < DDM_PORTMAP_MAX_ENTRIES + 100; i++) {
        char app[32];
        g_snprintf(app, sizeof app, "app%u", i);
        assert_true(ddm_portmap_set(m, "dev", app, (guint16)(1000 + i), NULL));
    }
    assert_int_equal(ddm_portmap_count(m), DDM_PORTMAP_MAX_ENTRIES);
    assert_int_equal(ddm_portmap_lookup(m, "dev", "app99"), 0);
    assert_int_equal(ddm_portmap_lookup(m, "dev", "app100"), 1100);
    ddm_portmap_free(m);
}

/* An entry keeps its serial and app in one key "SERIAL\tAPP": a serial that
 * is a prefix of another, or an app that starts with a tab-free copy of
 * the other's tail, is another owner; the file lines stay SERIAL TAB APP. */
static void test_portmap_packed_entry_fields(void **state)
{
    (void)state;
    DdmPortMap *m = ddm_portmap_new(8);
    assert_true(ddm_portmap_set(m, "emu", "app", 9001, NULL));
    assert_true(ddm_portmap_set(m, NULL, "emu", 9002, NULL));
    assert_false(ddm_portmap_port_taken_by_other(m, 9001, "emu", "app"));
    assert_true(ddm_portmap_port_taken_by_other(m, 9001, "emu-1", "app"));
    assert_true(ddm_portmap_port_taken_by_other(m, 9001, "em", "app"));
    assert_true(ddm_portmap_port_taken_by_other(m, 9001, "", "app"));
    assert_true(ddm_portmap_port_taken_by_other(m, 9001, "emu", "ap"));
    assert_true(ddm_portmap_port_taken_by_other(m, 9001, "emu", "apps"));
    assert_false(ddm_portmap_port_taken_by_other(m, 9002, NULL, "emu"));
    assert_true(ddm_portmap_port_taken_by_other(m, 9002, "emu", "emu"));
    assert_int_equal(ddm_portmap_lookup(m, "emu", "app"), 9001);
    assert_int_equal(ddm_portmap_lookup(m, "", "emu"), 9002);
    /* the app of port 9001 moves to 9002: the local "emu" loses it */
    assert_true(ddm_portmap_set(m, "emu", "app", 9002, NULL));
    assert_int_equal(ddm_portmap_count(m), 1);
    assert_int_equal(ddm_portmap_lookup(m, "", "emu"), 0);
    g_autofree char *text = ddm_portmap_serialize(m, NULL);
    assert_string_equal(text, DDM_PORTMAP_HEADER "\nemu\tapp\t9002\n");
    ddm_portmap_free(m);
}

static void test_portmap_parse_roundtrip(void **state)
{
    (void)state;
    DdmPortMap *m = ddm_portmap_new(8);
    assert_true(ddm_portmap_set(m, "emulator-5554", "com.example.a", 8600, NULL));
    assert_true(ddm_portmap_set(m, "", "Sleeper", 8601, NULL));
    assert_true(ddm_portmap_set(m, "R58M", "com.ex\xc3\xa4mple:remote", 65535, NULL));
    gsize len = 0;
    g_autofree char *text = ddm_portmap_serialize(m, &len);
    DdmPortMap *m2 = ddm_portmap_new(8);
    GError *e = NULL;
    assert_true(ddm_portmap_parse(m2, text, len, &e));
    assert_null(e);
    assert_int_equal(ddm_portmap_count(m2), 3);
    assert_int_equal(ddm_portmap_lookup(m2, "R58M", "com.ex\xc3\xa4mple:remote"), 65535);
    g_autofree char *text2 = ddm_portmap_serialize(m2, NULL);
    assert_string_equal(text, text2);
    /* more than the map holds: the most recent (the last lines) stay */
    DdmPortMap *small = ddm_portmap_new(2);
    assert_true(ddm_portmap_parse(small, text, len, NULL));
    assert_int_equal(ddm_portmap_count(small), 2);
    assert_int_equal(ddm_portmap_lookup(small, "emulator-5554", "com.example.a"), 0);
    assert_int_equal(ddm_portmap_lookup(small, "", "Sleeper"), 8601);
    /* a header alone: empty */
    assert_true(ddm_portmap_parse(small, DDM_PORTMAP_HEADER "\n", strlen(DDM_PORTMAP_HEADER) + 1, NULL));
    assert_int_equal(ddm_portmap_count(small), 0);
    ddm_portmap_free(small);
    ddm_portmap_free(m2);
    ddm_portmap_free(m);
}

static void test_portmap_parse_corrupt(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "ddmon-ports 1",                              /* no newline */
        "ddmon-ports 2\n",                            /* another format */
        "garbage\n",
        DDM_PORTMAP_HEADER "\ns\ta\t8600",            /* last line cut */
        DDM_PORTMAP_HEADER "\ns\ta\n",                /* two fields */
        DDM_PORTMAP_HEADER "\ns\ta\t0\n",             /* port 0 */
        DDM_PORTMAP_HEADER "\ns\ta\t65536\n",         /* too big */
        DDM_PORTMAP_HEADER "\ns\ta\t08600\n",         /* leading zero */
        DDM_PORTMAP_HEADER "\ns\ta\t-1\n",
        DDM_PORTMAP_HEADER "\ns\ta\t 8600\n",
        DDM_PORTMAP_HEADER "\ns\ta\t8600\t1\n",       /* a fourth field */
        DDM_PORTMAP_HEADER "\ns\t\t8600\n",           /* no app */
        DDM_PORTMAP_HEADER "\ns\ta\x1b[2J\t8600\n",   /* control characters */
        DDM_PORTMAP_HEADER "\ns\ta\xff\t8600\n",      /* not UTF-8 */
        DDM_PORTMAP_HEADER "\ns\ta\t8600\ns\ta\t8601\n", /* twice */
        DDM_PORTMAP_HEADER "\ns\ta\t8600\n\n",        /* an empty line */
        DDM_PORTMAP_HEADER "\r\ns\ta\t8600\r\n",
    };
    DdmPortMap *m = ddm_portmap_new(8);
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        assert_true(ddm_portmap_set(m, "x", "y", 9000, NULL));
        GError *e = NULL;
        assert_false(ddm_portmap_parse(m, bad[i], strlen(bad[i]), &e));
        assert_non_null(e);
        g_error_free(e);
        assert_int_equal(ddm_portmap_count(m), 0); /* nothing kept, nothing of before */
    }
    /* an embedded NUL */
    static const char nul[] = DDM_PORTMAP_HEADER "\ns\ta\0b\t8600\n";
    assert_false(ddm_portmap_parse(m, nul, sizeof nul - 1, NULL));
    /* too large */
    gsize big = DDM_PORTMAP_FILE_MAX + 1;
    char *huge = g_malloc(big);
    memset(huge, '\n', big);
    assert_false(ddm_portmap_parse(m, huge, big, NULL));
    g_free(huge);
    ddm_portmap_free(m);
}

static void test_portmap_file(void **state)
{
    (void)state;
    g_autofree char *tmp = g_dir_make_tmp("portmap-XXXXXX", NULL);
    assert_non_null(tmp);
    g_autofree char *dir = g_build_filename(tmp, "state", "ddmon", NULL);
    g_autofree char *path = g_build_filename(dir, "ports", NULL);
    DdmPortMap *m = ddm_portmap_new(8);
    GError *e = NULL;
    /* missing: empty, no error */
    assert_true(ddm_portmap_load(m, path, &e));
    assert_null(e);
    assert_true(ddm_portmap_set(m, "emulator-5554", "com.example.a", 8600, NULL));
    assert_true(ddm_portmap_set(m, "emulator-5554", "com.example.b", 8601, NULL));
    assert_true(ddm_portmap_save(m, path, &e));
    assert_null(e);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* no temporary file left */
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    int n = 0;
    while ((name = g_dir_read_name(d)))
        n++;
    g_dir_close(d);
    assert_int_equal(n, 1);

    DdmPortMap *m2 = ddm_portmap_new(8);
    assert_true(ddm_portmap_load(m2, path, &e));
    assert_int_equal(ddm_portmap_lookup(m2, "emulator-5554", "com.example.b"), 8601);
    assert_int_equal(ddm_portmap_count(m2), 2);

    /* saved again over the old file */
    assert_true(ddm_portmap_set(m2, "emulator-5554", "com.example.a", 8605, NULL));
    assert_true(ddm_portmap_save(m2, path, NULL));
    assert_true(ddm_portmap_load(m, path, NULL));
    assert_int_equal(ddm_portmap_lookup(m, "emulator-5554", "com.example.a"), 8605);

    /* corrupt: an error, and an empty map */
    assert_true(g_file_set_contents(path, "ddmon-ports 1\nx\ty\tlots\n", -1, NULL));
    assert_int_equal(chmod(path, 0600), 0);
    assert_false(ddm_portmap_load(m, path, &e));
    assert_non_null(e);
    assert_non_null(strstr(e->message, "line 2"));
    g_clear_error(&e);
    assert_int_equal(ddm_portmap_count(m), 0);

    /* writable by others: not trusted */
    assert_true(ddm_portmap_save(m2, path, NULL));
    assert_int_equal(chmod(path, 0666), 0);
    assert_false(ddm_portmap_load(m, path, &e));
    g_clear_error(&e);
    assert_int_equal(ddm_portmap_count(m), 0);

    /* a symlink: not followed */
    g_autofree char *real = g_build_filename(tmp, "real", NULL);
    assert_true(ddm_portmap_save(m2, real, NULL));
    g_unlink(path);
    assert_int_equal(symlink(real, path), 0);
    assert_false(ddm_portmap_load(m, path, &e));
    g_clear_error(&e);
    assert_int_equal(ddm_portmap_count(m), 0);
    g_unlink(path);

    /* a directory others may write to: not written */
    assert_int_equal(chmod(dir, 0777), 0);
    assert_false(ddm_portmap_save(m2, path, &e));
    g_clear_error(&e);
    assert_int_equal(chmod(dir, 0700), 0);

    /* too large: refused without reading it all */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(DDM_PORTMAP_HEADER "\n", f);
    for (guint i = 0; i < DDM_PORTMAP_FILE_MAX / 6 + 10; i++)
        fputs("s\ta\t1\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0600), 0);
    assert_false(ddm_portmap_load(m, path, &e));
    g_clear_error(&e);
    assert_int_equal(ddm_portmap_count(m), 0);

    g_unlink(path);
    g_unlink(real);
    g_rmdir(dir);
    g_autofree char *state_dir = g_path_get_dirname(dir);
    g_rmdir(state_dir);
    g_rmdir(tmp);
    ddm_portmap_free(m2);
    ddm_portmap_free(m);
}

/* ------------------------------------------------------------ against a model */

/* The map against a plain model (an array in LRU order, searched
 * linearly): random sets over few names and few ports, so that entries
 * evict each other, lose their port to another, move to another port,
 * and the map grows its slots and indexes, drops its last slot into holes
 * and empties (issue 16: slots, 16-bit links and open-addressing indexes
 * since). After every step each name's port, each port's owner, the count
 * and the file's order (oldest first) are the model's. */
typedef struct {
    const char *serial, *app;
    guint16 port;
} ModelEntry;

static void model_set(GArray *model, guint max, const char *serial, const char *app, guint16 port)
{
    gint found = -1;
    for (guint i = 0; i < model->len; i++) {
        ModelEntry *e = &g_array_index(model, ModelEntry, i);
        if (e->port == port && !(strcmp(e->serial, serial) == 0 && strcmp(e->app, app) == 0)) {
            g_array_remove_index(model, i);
            i--;
        }
    }
    for (guint i = 0; i < model->len; i++) {
        ModelEntry *e = &g_array_index(model, ModelEntry, i);
        if (strcmp(e->serial, serial) == 0 && strcmp(e->app, app) == 0)
            found = (gint)i;
    }
    ModelEntry ne = {serial, app, port};
    if (found >= 0) {
        g_array_remove_index(model, (guint)found);
    } else {
        while (model->len >= max)
            g_array_remove_index(model, 0);
    }
    g_array_append_val(model, ne);
}

static void model_check(DdmPortMap *m, GArray *model, const char *const *serials, guint n_serials,
                        const char *const *apps, guint n_apps, guint n_ports)
{
    assert_int_equal(ddm_portmap_count(m), model->len);
    for (guint si = 0; si < n_serials; si++)
        for (guint ai = 0; ai < n_apps; ai++) {
            guint16 want = 0;
            for (guint i = 0; i < model->len; i++) {
                ModelEntry *e = &g_array_index(model, ModelEntry, i);
                if (strcmp(e->serial, serials[si]) == 0 && strcmp(e->app, apps[ai]) == 0)
                    want = e->port;
            }
            assert_int_equal(ddm_portmap_lookup(m, serials[si], apps[ai]), want);
        }
    for (guint16 p = 1; p <= n_ports; p++) {
        const ModelEntry *owner = NULL;
        for (guint i = 0; i < model->len; i++)
            if (g_array_index(model, ModelEntry, i).port == p)
                owner = &g_array_index(model, ModelEntry, i);
        assert_int_equal(ddm_portmap_port_taken_by_other(m, p, "none", "none"), owner != NULL);
        if (owner)
            assert_false(ddm_portmap_port_taken_by_other(m, p, owner->serial, owner->app));
    }
    GString *want = g_string_new(DDM_PORTMAP_HEADER "\n");
    for (guint i = 0; i < model->len; i++) {
        ModelEntry *e = &g_array_index(model, ModelEntry, i);
        g_string_append_printf(want, "%s\t%s\t%u\n", e->serial, e->app, (unsigned)e->port);
    }
    g_autofree char *text = ddm_portmap_serialize(m, NULL);
    assert_string_equal(text, want->str);
    g_string_free(want, TRUE);
}

static void test_portmap_against_model(void **state)
{
    (void)state;
    static const char *const serials[] = {"", "dev", "d2"};
    static const char *const apps[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
    const guint n_ports = 24;
    const guint maxes[] = {1, 3, 16, 64};
    GRand *r = g_rand_new_with_seed(16);
    for (guint mi = 0; mi < G_N_ELEMENTS(maxes); mi++) {
        DdmPortMap *m = ddm_portmap_new(maxes[mi]);
        GArray *model = g_array_new(FALSE, FALSE, sizeof(ModelEntry));
        for (guint step = 0; step < 3000; step++) {
            const char *serial = serials[g_rand_int_range(r, 0, G_N_ELEMENTS(serials))];
            const char *app = apps[g_rand_int_range(r, 0, G_N_ELEMENTS(apps))];
            guint16 port = (guint16)g_rand_int_range(r, 1, (gint32)n_ports + 1);
            if (g_rand_int_range(r, 0, 200) == 0) { /* now and then: emptied by a load */
                assert_true(ddm_portmap_parse(m, DDM_PORTMAP_HEADER "\n",
                                              strlen(DDM_PORTMAP_HEADER "\n"), NULL));
                g_array_set_size(model, 0);
            } else {
                assert_true(ddm_portmap_set(m, serial, app, port, NULL));
                model_set(model, maxes[mi], serial, app, port);
            }
            model_check(m, model, serials, G_N_ELEMENTS(serials), apps, G_N_ELEMENTS(apps),
                        n_ports);
        }
        g_array_unref(model);
        ddm_portmap_free(m);
    }
    g_rand_free(r);
}

/* Many entries whose ports are far apart and whose names differ in one
 * byte: every one is found, and each drop (the oldest, 300 times) leaves
 * the rest found, with the count right. */
static void test_portmap_many_then_dropped(void **state)
{
    (void)state;
    DdmPortMap *m = ddm_portmap_new(DDM_PORTMAP_MAX_ENTRIES);
    char app[16];
    for (guint i = 0; i < DDM_PORTMAP_MAX_ENTRIES; i++) {
        g_snprintf(app, sizeof app, "p%03u", i);
        assert_true(ddm_portmap_set(m, "", app, (guint16)(1 + i * 127), NULL));
    }
    for (guint i = 0; i < 300; i++) {
        g_snprintf(app, sizeof app, "q%03u", i); /* a new app: the oldest p goes */
        assert_true(ddm_portmap_set(m, "", app, (guint16)(65000 + i), NULL));
        assert_int_equal(ddm_portmap_count(m), DDM_PORTMAP_MAX_ENTRIES);
    }
    for (guint i = 0; i < DDM_PORTMAP_MAX_ENTRIES; i++) {
        g_snprintf(app, sizeof app, "p%03u", i);
        guint16 want = i < 300 ? 0 : (guint16)(1 + i * 127);
        assert_int_equal(ddm_portmap_lookup(m, "", app), want);
        assert_int_equal(ddm_portmap_port_taken_by_other(m, (guint16)(1 + i * 127), "x", "x"),
                         i >= 300);
    }
    ddm_portmap_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_portmap_lookup_by_device_and_app),
        cmocka_unit_test(test_portmap_port_has_one_app),
        cmocka_unit_test(test_portmap_lru_bound),
        cmocka_unit_test(test_portmap_packed_entry_fields),
        cmocka_unit_test(test_portmap_parse_roundtrip),
        cmocka_unit_test(test_portmap_parse_corrupt),
        cmocka_unit_test(test_portmap_file),
        cmocka_unit_test(test_portmap_against_model),
        cmocka_unit_test(test_portmap_many_then_dropped),
    };
    return cmocka_run_group_tests_name("portmap", tests, NULL, NULL);
}
