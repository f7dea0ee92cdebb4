/* SPDX-License-Identifier: Apache-2.0
 *
 * What the fixture modules of the module loaders' tests share
 * (tests/unit/tui/tui-module-fixture.c, tests/unit/server/
 * web-module-fixture.c; the cases are module-loader-test.h's): one source
 * per module, built once per way of its table being wrong, chosen by
 * -DFIXTURE_KIND=FIXTURE_... (the folder's local.mk). Every module table
 * begins with the same header (version, size, package_version,
 * build_token: core/pluginhost/loader.h, ddm_loader_check_module_header);
 * FIXTURE_TABLE_HEADER fills it in, FIXTURE_ENTRY empties the one entry
 * the null-entry fixture leaves NULL, FIXTURE_TABLE gives the table or
 * the null-table fixture's NULL, and FIXTURE_EXPORTED names the exported
 * function, which the no-symbol fixture renames. Include after
 * <build-config.h>.
 */
#ifndef DDM_TEST_MODULE_FIXTURE_H
#define DDM_TEST_MODULE_FIXTURE_H

#include <stddef.h>

#define FIXTURE_GOOD 0
#define FIXTURE_VERSION 1       /* the table's version one more than this build's */
#define FIXTURE_SIZE 2          /* the table one pointer smaller */
#define FIXTURE_PACKAGE 3       /* from package version 0.0.0-fixture */
#define FIXTURE_TOKEN 4         /* from build fixture-build */
#define FIXTURE_NULL_ENTRY 5    /* one entry NULL */
#define FIXTURE_NULL_TABLE 6    /* the exported function returns NULL */
#define FIXTURE_NO_SYMBOL 7     /* the module's symbol not exported */
#ifndef FIXTURE_KIND
#error "build with -DFIXTURE_KIND=FIXTURE_..."
#endif

/* The table header of a TYPE table whose version this build is VERSION. */
#define FIXTURE_TABLE_HEADER(TYPE, VERSION)                                                     \
    .version = FIXTURE_KIND == FIXTURE_VERSION ? (VERSION) + 1 : (VERSION),                   \
    .size = FIXTURE_KIND == FIXTURE_SIZE ? sizeof(TYPE) - sizeof(void *) : sizeof(TYPE),      \
    .package_version = FIXTURE_KIND == FIXTURE_PACKAGE ? "0.0.0-fixture" : PACKAGE_VERSION, \
    .build_token = FIXTURE_KIND == FIXTURE_TOKEN ? "fixture-build" : DDM_BUILD_TOKEN

/* Entry FN, NULL in the null-entry fixture. */
#define FIXTURE_ENTRY(FN) (FIXTURE_KIND == FIXTURE_NULL_ENTRY ? NULL : (FN))

/* The table at ADDR, NULL in the null-table fixture. */
#define FIXTURE_TABLE(ADDR) (FIXTURE_KIND == FIXTURE_NULL_TABLE ? NULL : (ADDR))

/* The exported function's name: NAME, or NAME_fixture (declared by the
 * fixture: the module's header declares NAME only) where the symbol must
 * be missing. */
#if FIXTURE_KIND == FIXTURE_NO_SYMBOL
#define FIXTURE_EXPORTED(NAME) NAME##_fixture
#else
#define FIXTURE_EXPORTED(NAME) NAME
#endif

#endif /* DDM_TEST_MODULE_FIXTURE_H */
