/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "abi-other-major": built for the next ABI major, so the
 * loader must refuse it (ABI_MISMATCH) naming both versions.
 */
#include <stdlib.h>

#include <ddmon/plugin.h>

static int other_init(ddm_plugin *self, const ddm_host *host)
{
    abort(); /* must never run */
}

DDM_EXPORT const ddm_plugin_desc ddm_plugin_descriptor;
DDM_EXPORT const ddm_plugin_desc ddm_plugin_descriptor = {
    DDM_PLUGIN_MAGIC, DDM_ABI_MAJOR + 1, 0, (uint32_t)sizeof(ddm_plugin_desc),
    "abi-other-major", "1.0", "Apache-2.0", "next major", other_init, NULL};
