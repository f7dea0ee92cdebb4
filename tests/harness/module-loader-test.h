/* SPDX-License-Identifier: Apache-2.0
 *
 * The cases every test of a module loader shares (the terminal UI's,
 * cli/tui_module.c, and the web module's, server/web_module.c): fixture
 * modules built from one source per way of being wrong (see
 * module-fixture.h), each copied under the module's file name into a
 * private directory and handed to the loader, which must refuse all but
 * the good one before calling anything in it, with an error naming the
 * file and saying why. A test describes its loader in a TestModuleLoader
 * and lists TEST_MODULE_LOADER_CASES(&loader) among its own cases.
 * Include after <cmocka.h>. Link tests/harness/libddmtestutil.la with
 * -Wl,--wrap=ddm_loader_module_symbol (test_module_failure_remembered).
 */
#ifndef DDM_TEST_MODULE_LOADER_TEST_H
#define DDM_TEST_MODULE_LOADER_TEST_H

#include <stddef.h>

#include <glib.h>

/* One module loader under test (static, owned by the test). */
typedef struct {
    const char *fixtures_subdir; /* the fixtures' folder in the build tree, e.g. "tests/unit/tui" */
    const char *fixture_prefix;  /* fixture KIND is built there as .libs/PREFIX-KIND.so */
    const char *file;            /* the module's file name (e.g. DDM_TUI_MODULE_FILE) */
    const char *symbol;          /* the one symbol it exports */
    guint32 version;             /* the table version this build needs */
    size_t table_size;           /* sizeof the table in this build */
    /* The loader: the module's table (transfer none) or NULL and @error. */
    const void *(*load_from)(const char *dir, GError **error);
    /* The loader from its own directory, at most once (a failure too). */
    const void *(*load)(GError **error);
} TestModuleLoader;

/* A case's state: the loader, where its fixtures are, a private scratch
 * directory. */
typedef struct {
    const TestModuleLoader *loader;
    char *fixtures; /* $DDM_TOP_BUILDDIR/FIXTURES_SUBDIR/.libs */
    char *tmp;      /* private (0700): one directory per fixture */
} TestModuleFixture;

/** cmocka setup: *@state is the TestModuleLoader (the case's prestate);
 *  replaces it with a new TestModuleFixture. */
int test_module_setup(void **state);
/** cmocka teardown: removes the scratch directory, frees the fixture. */
int test_module_teardown(void **state);

/** A new directory in @f's scratch directory holding fixture @kind under
 *  the module's file name, mode 0644 (g_free). */
char *test_module_dir(TestModuleFixture *f, const char *kind);
/** The table the loader returns for fixture @kind (transfer none); fails
 *  the test, with the loader's message, if it is refused. */
const void *test_module_load_fixture(TestModuleFixture *f, const char *kind);
/** Loading fixture @kind is refused with a message containing @needle and
 *  naming the file. */
void test_module_expect_refused(TestModuleFixture *f, const char *kind, const char *needle);

/* The shared cases (state: a TestModuleFixture). */
void test_module_other_version_refused(void **state);
void test_module_small_table_refused(void **state);
void test_module_other_package_refused(void **state);
void test_module_other_build_refused(void **state);
void test_module_null_entry_refused(void **state);
void test_module_null_table_refused(void **state);
void test_module_no_symbol_refused(void **state);
void test_module_missing(void **state);
void test_module_writable_refused(void **state);
/* Needs -Wl,--wrap=ddm_loader_module_symbol in the test's LDFLAGS: the
 * wrap counts the loader's looks and makes them fail. */
void test_module_failure_remembered(void **state);

/* Case CASE of the list below, with its fixture, for loader @l (a
 * TestModuleLoader *, not const: cmocka's prestate is a void *). */
#define TEST_MODULE_LOADER_CASE(CASE, l) \
    cmocka_unit_test_prestate_setup_teardown(CASE, test_module_setup, test_module_teardown, (l))
/* Every shared case, for a CMUnitTest array. */
#define TEST_MODULE_LOADER_CASES(l)                                      \
    TEST_MODULE_LOADER_CASE(test_module_other_version_refused, l),       \
        TEST_MODULE_LOADER_CASE(test_module_small_table_refused, l),     \
        TEST_MODULE_LOADER_CASE(test_module_other_package_refused, l),   \
        TEST_MODULE_LOADER_CASE(test_module_other_build_refused, l),     \
        TEST_MODULE_LOADER_CASE(test_module_null_entry_refused, l),      \
        TEST_MODULE_LOADER_CASE(test_module_null_table_refused, l),      \
        TEST_MODULE_LOADER_CASE(test_module_no_symbol_refused, l),       \
        TEST_MODULE_LOADER_CASE(test_module_missing, l),                 \
        TEST_MODULE_LOADER_CASE(test_module_writable_refused, l),        \
        TEST_MODULE_LOADER_CASE(test_module_failure_remembered, l)

#endif /* DDM_TEST_MODULE_LOADER_TEST_H */
