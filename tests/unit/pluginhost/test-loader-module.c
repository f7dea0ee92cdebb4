/* SPDX-License-Identifier: Apache-2.0
 *
 * ddm_loader_open_module() (core/pluginhost/loader_module.c): one named
 * module loaded by the plugins' trust rules, as the server loads the web
 * module. Real .so files from DDM_TEST_PLUGIN_DIR (good, undefined-sym)
 * copied into a private directory: a trusted file loads and its symbols
 * are found; a missing file or directory, a directory or file writable by
 * others, a symbolic link and a file that is not ELF are refused before
 * dlopen, each with an error naming the path (a directory at fault is not
 * called a plugin directory); a file dlopen refuses gives the dynamic
 * linker's message, the path said once. ddm_loader_module_load_once()
 * loads once and gives a failure again without loading again.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "core/pluginhost/loader.h"
#include "tests/harness/private-dir.h"

typedef struct {
    char *plugin_dir; /* DDM_TEST_PLUGIN_DIR */
    char *tmp;        /* private (0700) */
} Fixture;

static int setup(void **state)
{
    Fixture *f = g_new0(Fixture, 1);
    const char *dir = g_getenv("DDM_TEST_PLUGIN_DIR");
    f->plugin_dir = g_strdup(dir ? dir : "tests/plugins/.libs");
    f->tmp = test_private_dir_new("ddmon-test-module-XXXXXX");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    test_private_dir_free(f->tmp);
    g_free(f->plugin_dir);
    g_free(f);
    return 0;
}

/* Copy test object @src_name.so into @dir as @dst_name with @mode. */
static void copy_so(Fixture *f, const char *src_name, const char *dir, const char *dst_name,
                    mode_t mode)
{
    g_autofree char *src = g_strdup_printf("%s/%s.so", f->plugin_dir, src_name);
    if (!g_file_test(src, G_FILE_TEST_EXISTS))
        fail_msg("test object %s missing (build with make check)", src);
    g_autofree char *dst = g_build_filename(dir, dst_name, NULL);
    g_autofree char *contents = NULL;
    gsize len = 0;
    assert_true(g_file_get_contents(src, &contents, &len, NULL));
    assert_true(g_file_set_contents(dst, contents, (gssize)len, NULL));
    assert_int_equal(chmod(dst, mode), 0);
}

static void assert_contains(const char *haystack, const char *needle)
{
    if (strstr(haystack, needle) == NULL)
        fail_msg("'%s' does not contain '%s'", haystack, needle);
}

static void test_trusted_module_loads(void **state)
{
    Fixture *f = *state;
    copy_so(f, "good", f->tmp, "ddmon-mod.so", 0644);
    GError *err = NULL;
    void *dl = ddm_loader_open_module(f->tmp, "ddmon-mod.so", &err);
    if (dl == NULL)
        fail_msg("not loaded: %s", err->message);
    assert_non_null(dlsym(dl, "ddm_plugin_descriptor"));
    dlclose(dl);
}

static void test_missing_file(void **state)
{
    Fixture *f = *state;
    GError *err = NULL;
    assert_null(ddm_loader_open_module(f->tmp, "ddmon-mod.so", &err));
    assert_non_null(err);
    g_autofree char *path = g_build_filename(f->tmp, "ddmon-mod.so", NULL);
    assert_contains(err->message, path);
    assert_contains(err->message, "No such file");
    g_clear_error(&err);
}

static void test_missing_dir(void **state)
{
    Fixture *f = *state;
    g_autofree char *dir = g_build_filename(f->tmp, "absent", NULL);
    GError *err = NULL;
    assert_null(ddm_loader_open_module(dir, "ddmon-mod.so", &err));
    assert_non_null(err);
    g_autofree char *want = g_strdup_printf("cannot load %s/ddmon-mod.so: ", dir);
    assert_contains(err->message, want);
    g_clear_error(&err);
}

static void test_dir_writable_by_others(void **state)
{
    Fixture *f = *state;
    g_autofree char *dir = g_build_filename(f->tmp, "open", NULL);
    assert_int_equal(g_mkdir(dir, 0755), 0);
    copy_so(f, "good", dir, "ddmon-mod.so", 0644);
    assert_int_equal(chmod(dir, 0777), 0);
    GError *err = NULL;
    assert_null(ddm_loader_open_module(dir, "ddmon-mod.so", &err));
    assert_true(g_error_matches(err, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE));
    assert_contains(err->message, "writable by others");
    /* It is the module's directory, not a plugin directory. */
    if (strstr(err->message, "plugin directory") != NULL)
        fail_msg("'%s' speaks of a plugin directory", err->message);
    g_clear_error(&err);
    /* Sticky is not enough for the module's own directory. */
    assert_int_equal(chmod(dir, 01777), 0);
    assert_null(ddm_loader_open_module(dir, "ddmon-mod.so", &err));
    assert_true(g_error_matches(err, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE));
    g_clear_error(&err);
    g_autofree char *file = g_build_filename(dir, "ddmon-mod.so", NULL);
    g_unlink(file);
}

static void test_file_writable_by_others(void **state)
{
    Fixture *f = *state;
    copy_so(f, "good", f->tmp, "ddmon-mod.so", 0666);
    GError *err = NULL;
    assert_null(ddm_loader_open_module(f->tmp, "ddmon-mod.so", &err));
    assert_true(g_error_matches(err, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE));
    assert_contains(err->message, "writable by group or others");
    g_clear_error(&err);
}

static void test_symlink_refused(void **state)
{
    Fixture *f = *state;
    copy_so(f, "good", f->tmp, "real.so", 0644);
    g_autofree char *link = g_build_filename(f->tmp, "ddmon-mod.so", NULL);
    assert_int_equal(symlink("real.so", link), 0);
    GError *err = NULL;
    assert_null(ddm_loader_open_module(f->tmp, "ddmon-mod.so", &err));
    assert_true(g_error_matches(err, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE));
    assert_contains(err->message, "symbolic link");
    g_clear_error(&err);
}

static void test_not_elf(void **state)
{
    Fixture *f = *state;
    g_autofree char *path = g_build_filename(f->tmp, "ddmon-mod.so", NULL);
    assert_true(g_file_set_contents(path, "#!/bin/sh\necho hi\n", -1, NULL));
    assert_int_equal(chmod(path, 0644), 0);
    GError *err = NULL;
    assert_null(ddm_loader_open_module(f->tmp, "ddmon-mod.so", &err));
    assert_true(g_error_matches(err, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN));
    assert_contains(err->message, "not a shared object");
    g_clear_error(&err);
}

static void test_dlopen_failure_has_dlerror(void **state)
{
    Fixture *f = *state;
    copy_so(f, "undefined-sym", f->tmp, "ddmon-mod.so", 0644);
    GError *err = NULL;
    assert_null(ddm_loader_open_module(f->tmp, "ddmon-mod.so", &err));
    assert_non_null(err);
    g_autofree char *path = g_build_filename(f->tmp, "ddmon-mod.so", NULL);
    assert_contains(err->message, path);
    assert_contains(err->message, "undefined symbol: ddm_test_no_such_symbol");
    /* dlerror() begins with the path too: said once. */
    const char *first = strstr(err->message, path);
    if (strstr(first + strlen(path), path) != NULL)
        fail_msg("'%s' names %s twice", err->message, path);
    g_clear_error(&err);
}

/* ddm_loader_module_load_once(): the loader runs once, with the directory
 * asked for once; later calls give what it gave, a table or a copy of its
 * error; a loader that fails without an error still gives one. */
static unsigned dir_calls, load_calls;
static const void *load_result;
static gboolean load_sets_error;

static char *once_dir(void)
{
    dir_calls++;
    return g_strdup("/nowhere/modules");
}

static const void *once_load(const char *dir, GError **error)
{
    load_calls++;
    assert_string_equal(dir, "/nowhere/modules");
    if (load_result == NULL && load_sets_error)
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s: no module (try %u)", dir,
                    load_calls);
    return load_result;
}

static void once_case(const void *result, gboolean sets_error, const char *want_error)
{
    DdmLoaderModuleOnce once = {0};
    dir_calls = load_calls = 0;
    load_result = result;
    load_sets_error = sets_error;
    for (int i = 0; i < 3; i++) {
        GError *err = NULL;
        assert_ptr_equal(ddm_loader_module_load_once(&once, once_dir, once_load, &err), result);
        if (result != NULL)
            assert_null(err);
        else {
            assert_non_null(err);
            assert_contains(err->message, want_error);
        }
        g_clear_error(&err);
    }
    assert_int_equal(dir_calls, 1);
    assert_int_equal(load_calls, 1);
    assert_ptr_equal(once.table, result);
    g_clear_error(&once.failed);
}

static void test_load_once(void **state)
{
    static const int table = 42;
    (void)state;
    once_case(&table, FALSE, NULL);
    once_case(NULL, TRUE, "/nowhere/modules: no module (try 1)");
    once_case(NULL, FALSE, "/nowhere/modules: the module did not load");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_trusted_module_loads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_writable_by_others, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_writable_by_others, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_elf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dlopen_failure_has_dlerror, setup, teardown),
        cmocka_unit_test(test_load_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
