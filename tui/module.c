/* SPDX-License-Identifier: Apache-2.0
 *
 * The entry point of ddmon-tui.so (module.h): the one exported symbol,
 * which hands `ddmon watch` the terminal UI's function table.
 */
#include <build-config.h>

#include "tui/module.h"
#include "tui/tui.h"

static const DdmTuiModule table = {
    .version = DDM_TUI_MODULE_VERSION,
    .size = sizeof(DdmTuiModule),
    .package_version = PACKAGE_VERSION,
    .build_token = DDM_BUILD_TOKEN,
    .available = ddm_tui_available,
    .run = ddm_tui_run,
};

const DdmTuiModule *ddm_tui_module(void)
{
    return &table;
}
