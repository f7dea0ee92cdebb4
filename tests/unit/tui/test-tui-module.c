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
 * ddmon-tui.so into a private directory; the cases every module loader
 * must pass are tests/harness/module-loader-test.c's, shared with the web
 * module's test.
 */
#include <build-config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "cli/tui_module.h"
#include "core/pluginhost/loader.h"
#include "tests/harness/module-loader-test.h"

/* The loader under test, for the cases all module loaders share. */
static const void *load_from(const char *dir, GError **error)
{
    return ddm_cli_tui_module_load_from(dir, error);
}

static const void *load(GError **error)
{
    return ddm_cli_tui_module_load(error);
}

static TestModuleLoader tui_loader = {
    .fixtures_subdir = "tests/unit/tui",
    .fixture_prefix = "tuimod",
    .file = DDM_TUI_MODULE_FILE,
    .symbol = DDM_TUI_MODULE_SYMBOL,
    .version = DDM_TUI_MODULE_VERSION,
    .table_size = sizeof(DdmTuiModule),
    .load_from = load_from,
    .load = load,
};

static void test_good_table_accepted(void **state)
{
    const DdmTuiModule *t = test_module_load_fixture(*state, "good");
    assert_int_equal(t->version, DDM_TUI_MODULE_VERSION);
    assert_string_equal(t->build_token, DDM_BUILD_TOKEN);
    assert_false(t->available());
    assert_int_equal(t->run("nowhere"), 42);
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
        TEST_MODULE_LOADER_CASE(test_good_table_accepted, &tui_loader),
        TEST_MODULE_LOADER_CASES(&tui_loader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
