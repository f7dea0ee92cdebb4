/* SPDX-License-Identifier: Apache-2.0
 *
 * ddm_server_web_module_load_from() (server/web_module.c): the server
 * accepts a web module whose table fits this binary and refuses, before
 * calling anything in it, one from another table version, with a smaller
 * table, from another package version or another build (DDM_BUILD_TOKEN),
 * with a NULL entry or a NULL table, or without the ddm_web_module symbol,
 * each with an error naming the file and saying why; a directory without
 * the module gives an error naming the file, and a module others may write
 * to is refused. The modules are fixtures built from web-module-fixture.c
 * (one per way of being wrong), copied as ddmon-web.so into a private
 * directory; the cases every module loader must pass are
 * tests/harness/module-loader-test.c's, shared with the terminal UI's.
 */
#include <build-config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>

#include <cmocka.h>
#include <glib.h>

#include "server/web_module.h"
#include "tests/harness/module-loader-test.h"

/* The loader under test, for the cases all module loaders share. */
static const void *load_from(const char *dir, GError **error)
{
    return ddm_server_web_module_load_from(dir, error);
}

static const void *load(GError **error)
{
    return ddm_server_web_module_load(error);
}

static TestModuleLoader web_loader = {
    .fixtures_subdir = "tests/unit/server",
    .fixture_prefix = "webmod",
    .file = DDM_WEB_MODULE_FILE,
    .symbol = DDM_WEB_MODULE_SYMBOL,
    .version = DDM_WEB_MODULE_VERSION,
    .table_size = sizeof(DdmWebModule),
    .load_from = load_from,
    .load = load,
};

static void test_good_table_accepted(void **state)
{
    const DdmWebModule *t = test_module_load_fixture(*state, "good");
    assert_int_equal(t->version, DDM_WEB_MODULE_VERSION);
    assert_string_equal(t->build_token, DDM_BUILD_TOKEN);
    assert_string_equal(t->web_url(NULL), "fixture");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST_MODULE_LOADER_CASE(test_good_table_accepted, &web_loader),
        TEST_MODULE_LOADER_CASES(&web_loader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
