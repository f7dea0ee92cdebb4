/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only terminal UI modules for tests/unit/tui/test-tui-module.c: the
 * table of ddmon-tui.so (tui/module.h) as this build makes it, with no UI
 * behind it, and one way of it being wrong per build of this file
 * (FIXTURE_KIND, tests/unit/tui/local.mk): another table version, a
 * smaller table, another package version, another build's token, a NULL
 * entry, a NULL table, no exported ddm_tui_module. `ddmon watch` must
 * accept the first and refuse each of the others, saying why, before
 * calling anything in it. The kinds and the table header are
 * tests/harness/module-fixture.h's, shared with the web module's fixture.
 */
#include <build-config.h>

#include "tests/harness/module-fixture.h"
#include "tui/module.h"

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
    FIXTURE_TABLE_HEADER(DdmTuiModule, DDM_TUI_MODULE_VERSION),
    .available = available,
    .run = FIXTURE_ENTRY(run),
};

const DdmTuiModule *FIXTURE_EXPORTED(ddm_tui_module)(void);
const DdmTuiModule *FIXTURE_EXPORTED(ddm_tui_module)(void)
{
    return FIXTURE_TABLE(&table);
}
