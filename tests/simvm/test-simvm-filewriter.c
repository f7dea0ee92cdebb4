/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon-simvm's file writer (tools/simvm/filewriter.c): each path ends with
 * the newest text handed over, written whole (no temporary file left), a
 * flush waits for the disk, and freeing the writer writes what was queued.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "simvm-private.h"

typedef struct Fixture {
    char *dir;
    char *a, *b;
} Fixture;

static int setup(void **state)
{
    Fixture *f = g_new0(Fixture, 1);
    f->dir = g_dir_make_tmp("simvm-files-XXXXXX", NULL);
    assert_non_null(f->dir);
    f->a = g_build_filename(f->dir, "state.json", NULL);
    f->b = g_build_filename(f->dir, "ports", NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    (void)g_unlink(f->a);
    (void)g_unlink(f->b);
    (void)g_rmdir(f->dir);
    g_free(f->a);
    g_free(f->b);
    g_free(f->dir);
    g_free(f);
    return 0;
}

static char *contents(const char *path)
{
    char *text = NULL;
    assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

/* Only the two files remain in the directory: no temporary one. */
static void assert_only_files(const Fixture *f)
{
    GDir *d = g_dir_open(f->dir, 0, NULL);
    const char *name;
    int n = 0;
    assert_non_null(d);
    while ((name = g_dir_read_name(d)) != NULL) {
        assert_true(strcmp(name, "state.json") == 0 || strcmp(name, "ports") == 0);
        n++;
    }
    g_dir_close(d);
    assert_int_equal(n, 2);
}

static void test_newest_text_wins(void **state)
{
    Fixture *f = *state;
    SimFileWriter *fw = sim_file_writer_new();
    for (int i = 0; i < 2000; i++) {
        sim_file_writer_put(fw, f->a, g_strdup_printf("{\"n\": %d, \"pad\": \"%0*d\"}\n", i, 4000, 0));
        sim_file_writer_put(fw, f->b, g_strdup_printf("ports %d\n", i));
    }
    sim_file_writer_flush(fw);
    g_autofree char *a = contents(f->a);
    g_autofree char *b = contents(f->b);
    assert_true(g_str_has_prefix(a, "{\"n\": 1999, "));
    assert_int_equal(strlen(a), strlen("{\"n\": 1999, \"pad\": \"\"}\n") + 4000);
    assert_string_equal(b, "ports 1999\n");
    assert_only_files(f);

    /* after a flush, a new text lands again */
    sim_file_writer_put(fw, f->b, g_strdup("ports again\n"));
    sim_file_writer_flush(fw);
    g_autofree char *b2 = contents(f->b);
    assert_string_equal(b2, "ports again\n");
    sim_file_writer_free(fw);
}

static void test_free_writes_what_is_queued(void **state)
{
    Fixture *f = *state;
    SimFileWriter *fw = sim_file_writer_new();
    sim_file_writer_put(fw, f->a, g_strdup("first\n"));
    sim_file_writer_put(fw, f->b, g_strdup("ports\n"));
    sim_file_writer_put(fw, f->a, g_strdup("last\n"));
    sim_file_writer_free(fw);
    g_autofree char *a = contents(f->a);
    g_autofree char *b = contents(f->b);
    assert_string_equal(a, "last\n");
    assert_string_equal(b, "ports\n");
    assert_only_files(f);
    sim_file_writer_free(NULL);
}

static gint warnings_naming_it; /* warnings that name no-such-dir (from the writer's thread) */

static void on_warning(const char *domain, GLogLevelFlags level, const char *message, gpointer ud)
{
    (void)domain;
    (void)level;
    (void)ud;
    if (strstr(message, "no-such-dir"))
        g_atomic_int_inc(&warnings_naming_it);
}

/* A path it cannot write: a warning naming it, and the writer goes on. */
static void test_unwritable_path_goes_on(void **state)
{
    Fixture *f = *state;
    g_autofree char *bad = g_build_filename(f->dir, "no-such-dir", "state.json", NULL);
    guint handler = g_log_set_handler("ddmon-simvm", G_LOG_LEVEL_WARNING, on_warning, NULL);
    SimFileWriter *fw = sim_file_writer_new();
    sim_file_writer_put(fw, bad, g_strdup("x\n"));
    sim_file_writer_flush(fw);
    assert_int_equal(g_atomic_int_get(&warnings_naming_it), 1);
    g_log_remove_handler("ddmon-simvm", handler);
    sim_file_writer_put(fw, f->a, g_strdup("still\n"));
    sim_file_writer_put(fw, f->b, g_strdup("here\n"));
    sim_file_writer_free(fw);
    g_autofree char *a = contents(f->a);
    assert_string_equal(a, "still\n");
    assert_only_files(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_newest_text_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_writes_what_is_queued, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_path_goes_on, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
