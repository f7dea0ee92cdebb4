/* SPDX-License-Identifier: Apache-2.0
 *
 * ddm_cli_tui_module_load_from() (cli/tui_module.c): `ddmon watch`
 * accepts a terminal UI module whose table fits this binary and refuses,
 * before calling anything in it, one from another table version, with a
 * smaller table, from another package version or another build
 * (DDM_BUILD_TOKEN), with a NULL entry or a NULL table, or without the
 * ddm_tui_module symbol, each with an error naming the file and saying
 * why; a directory without the module gives an error naming the file,
 * and a module others may write to is refused; the build tree's module is
 * looked for only by the build tree's binary (ddm_loader_module_dir(),
 * core/pluginhost/loader_module.c, shared with the web module's loader).
 * The modules are fixtures built from
 * tui-module-fixture.c (one per way of being wrong), copied as
 * ddmon-tui.so into a private directory.
 */
#include <build-config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "cli/tui_module.h"
#include "core/pluginhost/loader.h"
#include "tests/harness/private-dir.h"

typedef struct {
    char *fixtures; /* the built fixtures: $DDM_TOP_BUILDDIR/tests/unit/tui/.libs */
    char *tmp;      /* private (0700): one directory per fixture */
} Fixture;

static int setup(void **state)
{
    Fixture *f = g_new0(Fixture, 1);
    const char *top = g_getenv("DDM_TOP_BUILDDIR");
    f->fixtures = g_build_filename(top ? top : ".", "tests", "unit", "tui", ".libs", NULL);
    f->tmp = test_private_dir_new("ddmon-test-tuimod-XXXXXX");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    test_private_dir_free(f->tmp);
    g_free(f->fixtures);
    g_free(f);
    return 0;
}

/* A directory holding fixture @kind as DDM_TUI_MODULE_FILE (g_free). */
static char *module_dir(Fixture *f, const char *kind)
{
    g_autofree char *src = g_strdup_printf("%s/tuimod-%s.so", f->fixtures, kind);
    g_autofree char *contents = NULL;
    gsize len = 0;
    if (!g_file_get_contents(src, &contents, &len, NULL))
        fail_msg("fixture %s missing (make tests/unit/tui/test-tui-module)", src);
    char *dir = g_build_filename(f->tmp, kind, NULL);
    assert_int_equal(g_mkdir(dir, 0700), 0);
    g_autofree char *dst = g_build_filename(dir, DDM_TUI_MODULE_FILE, NULL);
    assert_true(g_file_set_contents(dst, contents, (gssize)len, NULL));
    assert_int_equal(chmod(dst, 0644), 0);
    return dir;
}

/* Loading fixture @kind is refused with a message containing @needle and
 * naming the file. */
static void expect_refused(Fixture *f, const char *kind, const char *needle)
{
    g_autofree char *dir = module_dir(f, kind);
    g_autofree char *path = g_build_filename(dir, DDM_TUI_MODULE_FILE, NULL);
    GError *err = NULL;
    const DdmTuiModule *t = ddm_cli_tui_module_load_from(dir, &err);
    if (t != NULL || err == NULL)
        fail_msg("%s: accepted", kind);
    if (strstr(err->message, needle) == NULL || strstr(err->message, path) == NULL)
        fail_msg("%s: '%s' lacks '%s' or the path", kind, err->message, needle);
    g_error_free(err);
}

static void test_good_table_accepted(void **state)
{
    Fixture *f = *state;
    g_autofree char *dir = module_dir(f, "good");
    GError *err = NULL;
    const DdmTuiModule *t = ddm_cli_tui_module_load_from(dir, &err);
    if (t == NULL)
        fail_msg("refused: %s", err->message);
    assert_int_equal(t->version, DDM_TUI_MODULE_VERSION);
    assert_string_equal(t->build_token, DDM_BUILD_TOKEN);
    assert_false(t->available());
    assert_int_equal(t->run("nowhere"), 42);
}

static void test_other_version_refused(void **state)
{
    g_autofree char *want = g_strdup_printf("table version %u, size %zu; this ddmon needs version %u",
                                            DDM_TUI_MODULE_VERSION + 1, sizeof(DdmTuiModule),
                                            DDM_TUI_MODULE_VERSION);
    expect_refused(*state, "version", want);
}

static void test_small_table_refused(void **state)
{
    g_autofree char *want = g_strdup_printf("size %zu; this ddmon needs version %u, size %zu",
                                            sizeof(DdmTuiModule) - sizeof(void *),
                                            DDM_TUI_MODULE_VERSION, sizeof(DdmTuiModule));
    expect_refused(*state, "size", want);
}

static void test_other_package_refused(void **state)
{
    expect_refused(*state, "package",
                   "is from ddmon 0.0.0-fixture, this is ddmon " PACKAGE_VERSION
                   ": install both from one build");
}

static void test_other_build_refused(void **state)
{
    expect_refused(*state, "token",
                   "is from another build of ddmon " PACKAGE_VERSION
                   " (build fixture-build, this ddmon is build " DDM_BUILD_TOKEN ")");
}

static void test_null_entry_refused(void **state)
{
    expect_refused(*state, "null-entry", "its table has empty entries");
}

static void test_null_table_refused(void **state)
{
    expect_refused(*state, "null-table", "table version 0, size 0");
}

static void test_no_symbol_refused(void **state)
{
    expect_refused(*state, "no-symbol", "exports no " DDM_TUI_MODULE_SYMBOL);
}

static void test_missing_module(void **state)
{
    Fixture *f = *state;
    g_autofree char *dir = g_build_filename(f->tmp, "empty", NULL);
    assert_int_equal(g_mkdir(dir, 0700), 0);
    GError *err = NULL;
    assert_null(ddm_cli_tui_module_load_from(dir, &err));
    assert_non_null(err);
    g_autofree char *path = g_build_filename(dir, DDM_TUI_MODULE_FILE, NULL);
    assert_non_null(strstr(err->message, path));
    g_error_free(err);
}

/* The build tree's own module (tui/.libs/ddmon-tui.so) fits: the table
 * the real module.c makes passes every check. Nothing in it is called. */
static void test_built_module_accepted(void **state)
{
    (void)state;
    const char *top = g_getenv("DDM_TOP_BUILDDIR");
    g_autofree char *dir = g_build_filename(top ? top : ".", "tui", ".libs", NULL);
    GError *err = NULL;
    const DdmTuiModule *t = ddm_cli_tui_module_load_from(dir, &err);
    if (t == NULL)
        fail_msg("the build tree's module was refused: %s", err->message);
    assert_int_equal(t->version, DDM_TUI_MODULE_VERSION);
    assert_string_equal(t->build_token, DDM_BUILD_TOKEN);
}

/* A module file others may write to is refused before dlopen: the rule of
 * the plugins and of the web module (core/pluginhost/loader_trust.c). */
static void test_writable_module_refused(void **state)
{
    Fixture *f = *state;
    g_autofree char *dir = module_dir(f, "good");
    g_autofree char *path = g_build_filename(dir, DDM_TUI_MODULE_FILE, NULL);
    assert_int_equal(chmod(path, 0666), 0);
    GError *err = NULL;
    assert_null(ddm_cli_tui_module_load_from(dir, &err));
    assert_non_null(err);
    if (strstr(err->message, "writable by") == NULL)
        fail_msg("'%s' does not say the file is writable by others", err->message);
    g_error_free(err);
}

/* Where a module is looked for (ddm_loader_module_dir(), shared with the
 * web module's loader): the build tree's SUBDIR/.libs only for the binary
 * of that tree (its directory, or libtool's .libs in it), else the
 * installed directory, also for another tree, one that does not exist or
 * none. */
static void test_module_dir_choice(void **state)
{
    (void)state;
    char *exe = realpath("/proc/self/exe", NULL);
    assert_non_null(exe);
    g_autofree char *exe_dir = g_path_get_dirname(exe);
    free(exe);
    g_autofree char *base = g_path_get_basename(exe_dir);
    g_autofree char *top = strcmp(base, ".libs") == 0 ? g_path_get_dirname(exe_dir) : g_strdup(exe_dir);
    g_autofree char *in_tree = ddm_loader_module_dir(top, "tui", "/installed/lib/ddmon");
    g_autofree char *want = g_build_filename(top, "tui", ".libs", NULL);
    assert_string_equal(in_tree, want);
    g_autofree char *above = g_path_get_dirname(top);
    g_autofree char *other = ddm_loader_module_dir(above, "tui", "/installed/lib/ddmon");
    assert_string_equal(other, "/installed/lib/ddmon");
    g_autofree char *gone = ddm_loader_module_dir("/nonexistent/build", "web", "/installed/lib/ddmon");
    assert_string_equal(gone, "/installed/lib/ddmon");
    g_autofree char *none = ddm_loader_module_dir(NULL, "web", "/installed/lib/ddmon");
    assert_string_equal(none, "/installed/lib/ddmon");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_built_module_accepted),
        cmocka_unit_test(test_module_dir_choice),
        cmocka_unit_test_setup_teardown(test_good_table_accepted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_version_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_table_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_package_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_build_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_entry_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_table_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_symbol_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_module, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writable_module_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
