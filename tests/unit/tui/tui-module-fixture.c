/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only terminal UI modules for tests/unit/tui/test-tui-module.c: the
 * table of ddmon-tui.so (tui/module.h) as this build makes it, with no UI
 * behind it, and one way of it being wrong per build of this file
 * (FIXTURE_KIND, tests/unit/tui/local.mk): another table version, a
 * smaller table, another package version, another build's token, a NULL
 * entry, a NULL table, no exported ddm_tui_module. `ddmon watch` must
 * accept the first and refuse each of the others, saying why, before
 * calling anything in it.
 */
#include <build-config.h>

#include "tui/module.h"

#define FIXTURE_GOOD 0
#define FIXTURE_VERSION 1
#define FIXTURE_SIZE 2
#define FIXTURE_PACKAGE 3
#define FIXTURE_TOKEN 4
#define FIXTURE_NULL_ENTRY 5
#define FIXTURE_NULL_TABLE 6
#define FIXTURE_NO_SYMBOL 7
#ifndef FIXTURE_KIND
#error "build with -DFIXTURE_KIND=FIXTURE_..."
#endif

/* The test calls these through an accepted table only. */
static gboolean available(void)
{
    return FALSE;
}
static int run(const char *socket_path)
{
    (void)socket_path;
    return 42;
}

static const DdmTuiModule table = {
    .version = FIXTURE_KIND == FIXTURE_VERSION ? DDM_TUI_MODULE_VERSION + 1 : DDM_TUI_MODULE_VERSION,
    .size = FIXTURE_KIND == FIXTURE_SIZE ? sizeof(DdmTuiModule) - sizeof(void *)
                                         : sizeof(DdmTuiModule),
    .package_version = FIXTURE_KIND == FIXTURE_PACKAGE ? "0.0.0-fixture" : PACKAGE_VERSION,
    .build_token = FIXTURE_KIND == FIXTURE_TOKEN ? "fixture-build" : DDM_BUILD_TOKEN,
    .available = available,
    .run = FIXTURE_KIND == FIXTURE_NULL_ENTRY ? NULL : run,
};

#if FIXTURE_KIND == FIXTURE_NO_SYMBOL
const DdmTuiModule *ddm_tui_module_fixture(void);
const DdmTuiModule *ddm_tui_module_fixture(void)
#else
const DdmTuiModule *ddm_tui_module(void)
#endif
{
    return FIXTURE_KIND == FIXTURE_NULL_TABLE ? NULL : &table;
}
