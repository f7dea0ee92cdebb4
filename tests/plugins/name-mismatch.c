/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin in file name-mismatch.so whose descriptor says
 * "other-name": refused (BAD_DESCRIPTOR), since names are how users enable,
 * disable and configure plugins.
 */
#include <stdlib.h>

#include <ddmon/plugin.h>

static int mismatch_init(ddm_plugin *self, const ddm_host *host)
{
    abort(); /* must never run */
}

DDM_PLUGIN_DEFINE("other-name", "1.0", "Apache-2.0", "wrong name", mismatch_init, NULL);
