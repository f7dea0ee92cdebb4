/* SPDX-License-Identifier: Apache-2.0
 *
 * The shared cases of the module loaders' tests (module-loader-test.h):
 * the fixture directory, the copy of a fixture under the module's name,
 * and each refusal the loaders of the terminal UI's and the web module
 * must make, with the message each must give; and that a loader which
 * failed says so again without looking again (a linker wrap of
 * ddm_loader_module_symbol counts the looks).
 */
#include <build-config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "module-loader-test.h"
#include "private-dir.h"

int test_module_setup(void **state)
{
    TestModuleFixture *f = g_new0(TestModuleFixture, 1);
    f->loader = *state;
    const char *top = g_getenv("DDM_TOP_BUILDDIR");
    f->fixtures = g_build_filename(top ? top : ".", f->loader->fixtures_subdir, ".libs", NULL);
    g_autofree char *tmpl = g_strdup_printf("ddmon-test-%s-XXXXXX", f->loader->fixture_prefix);
    f->tmp = test_private_dir_new(tmpl);
    *state = f;
    return 0;
}

int test_module_teardown(void **state)
{
    TestModuleFixture *f = *state;
    test_private_dir_free(f->tmp);
    g_free(f->fixtures);
    g_free(f);
    return 0;
}

char *test_module_dir(TestModuleFixture *f, const char *kind)
{
    g_autofree char *src = g_strdup_printf("%s/%s-%s.so", f->fixtures, f->loader->fixture_prefix, kind);
    g_autofree char *contents = NULL;
    gsize len = 0;
    if (!g_file_get_contents(src, &contents, &len, NULL))
        fail_msg("fixture %s missing (build the check_LTLIBRARIES of %s)", src,
                 f->loader->fixtures_subdir);
    char *dir = g_build_filename(f->tmp, kind, NULL);
    assert_int_equal(g_mkdir(dir, 0700), 0);
    g_autofree char *dst = g_build_filename(dir, f->loader->file, NULL);
    assert_true(g_file_set_contents(dst, contents, (gssize)len, NULL));
    assert_int_equal(chmod(dst, 0644), 0);
    return dir;
}

const void *test_module_load_fixture(TestModuleFixture *f, const char *kind)
{
    g_autofree char *dir = test_module_dir(f, kind);
    GError *err = NULL;
    const void *t = f->loader->load_from(dir, &err);
    if (t == NULL)
        fail_msg("%s: refused: %s", kind, err ? err->message : "(no error)");
    return t;
}

void test_module_expect_refused(TestModuleFixture *f, const char *kind, const char *needle)
{
    g_autofree char *dir = test_module_dir(f, kind);
    g_autofree char *path = g_build_filename(dir, f->loader->file, NULL);
    GError *err = NULL;
    const void *t = f->loader->load_from(dir, &err);
    if (t != NULL || err == NULL)
        fail_msg("%s: accepted", kind);
    if (strstr(err->message, needle) == NULL || strstr(err->message, path) == NULL)
        fail_msg("%s: '%s' lacks '%s' or the path", kind, err->message, needle);
    g_error_free(err);
}

void test_module_other_version_refused(void **state)
{
    TestModuleFixture *f = *state;
    g_autofree char *want = g_strdup_printf("table version %u, size %zu; this ddmon needs version %u",
                                            f->loader->version + 1, f->loader->table_size,
                                            f->loader->version);
    test_module_expect_refused(f, "version", want);
}

void test_module_small_table_refused(void **state)
{
    TestModuleFixture *f = *state;
    g_autofree char *want = g_strdup_printf("size %zu; this ddmon needs version %u, size %zu",
                                            f->loader->table_size - sizeof(void *),
                                            f->loader->version, f->loader->table_size);
    test_module_expect_refused(f, "size", want);
}

void test_module_other_package_refused(void **state)
{
    test_module_expect_refused(*state, "package",
                               "is from ddmon 0.0.0-fixture, this is ddmon " PACKAGE_VERSION
                               ": install both from one build");
}

void test_module_other_build_refused(void **state)
{
    test_module_expect_refused(*state, "token",
                               "is from another build of ddmon " PACKAGE_VERSION
                               " (build fixture-build, this ddmon is build " DDM_BUILD_TOKEN ")");
}

void test_module_null_entry_refused(void **state)
{
    test_module_expect_refused(*state, "null-entry", "its table has empty entries");
}

void test_module_null_table_refused(void **state)
{
    test_module_expect_refused(*state, "null-table", "table version 0, size 0");
}

void test_module_no_symbol_refused(void **state)
{
    TestModuleFixture *f = *state;
    g_autofree char *want = g_strdup_printf("exports no %s", f->loader->symbol);
    test_module_expect_refused(f, "no-symbol", want);
}

/* A directory without the module: an error naming the file. */
void test_module_missing(void **state)
{
    TestModuleFixture *f = *state;
    g_autofree char *dir = g_build_filename(f->tmp, "empty", NULL);
    assert_int_equal(g_mkdir(dir, 0700), 0);
    GError *err = NULL;
    assert_null(f->loader->load_from(dir, &err));
    assert_non_null(err);
    g_autofree char *path = g_build_filename(dir, f->loader->file, NULL);
    if (strstr(err->message, path) == NULL)
        fail_msg("'%s' does not name %s", err->message, path);
    g_error_free(err);
}

/* A module file others may write to is refused before dlopen: the rule of
 * the plugins (core/pluginhost/loader_trust.c). */
void test_module_writable_refused(void **state)
{
    TestModuleFixture *f = *state;
    g_autofree char *dir = test_module_dir(f, "good");
    g_autofree char *path = g_build_filename(dir, f->loader->file, NULL);
    assert_int_equal(chmod(path, 0666), 0);
    GError *err = NULL;
    assert_null(f->loader->load_from(dir, &err));
    assert_non_null(err);
    if (strstr(err->message, "writable by") == NULL)
        fail_msg("'%s' does not say the file is writable by others", err->message);
    g_error_free(err);
}

/* The loaders' look-up of a module (core/pluginhost/loader.h), wrapped by
 * the linker (-Wl,--wrap=ddm_loader_module_symbol): it counts the looks
 * and, while symbol_fails is set, fails each with the same error. */
void *__real_ddm_loader_module_symbol(const char *dir, const char *name, const char *symbol,
                                      void **dl, GError **error);
void *__wrap_ddm_loader_module_symbol(const char *dir, const char *name, const char *symbol,
                                      void **dl, GError **error);
static unsigned symbol_looks;
static gboolean symbol_fails;

void *__wrap_ddm_loader_module_symbol(const char *dir, const char *name, const char *symbol,
                                      void **dl, GError **error)
{
    symbol_looks++;
    if (!symbol_fails)
        return __real_ddm_loader_module_symbol(dir, name, symbol, dl, error);
    *dl = NULL;
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s/%s: not there (the test's wrap)", dir,
                name);
    return NULL;
}

/* The loader from its own directory (ddm_loader_module_load_once()) looks
 * for a missing module once: a second call says the same without looking
 * again. */
void test_module_failure_remembered(void **state)
{
    TestModuleFixture *f = *state;
    symbol_fails = TRUE;
    symbol_looks = 0;
    GError *first = NULL;
    GError *again = NULL;
    assert_null(f->loader->load(&first));
    assert_non_null(first);
    assert_int_equal(symbol_looks, 1);
    assert_null(f->loader->load(&again));
    assert_non_null(again);
    assert_string_equal(again->message, first->message);
    assert_int_equal(symbol_looks, 1);
    symbol_fails = FALSE;
    g_error_free(first);
    g_error_free(again);
}
